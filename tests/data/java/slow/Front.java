// A service with one slow path, for timing every method of a class: the
// front handles ids 0..19 in a loop; its store's `find` sleeps 120 ms for
// ids 3, 10 and 17 (id % 7 == 3) and answers the others at once. The
// front's own methods are fast but for `handle`, which waits on `find`.
// It prints "slow front started" once every method has run.
package slow;

public class Front {
    private final Store store = new Store();

    int handle(int id) throws InterruptedException {
        int found = store.find(id);
        return found + label(id).length();
    }

    String label(int id) {
        return "#" + id;
    }

    static int twice(int x) {
        return 2 * x;
    }

    public static void main(String[] args) throws Exception {
        Front front = new Front();
        for (int i = 0; i < 20; i++) {
            front.handle(i);
        }
        twice(1);
        front.store.size();
        System.out.println("slow front started");
        for (int i = 0; ; i++) {
            front.handle(i % 20);
            twice(i);
            front.store.size();
            Thread.sleep(2);
        }
    }
}
