// The store behind slow.Front: `find` is slow for ids with id % 7 == 3.
package slow;

class Store {
    private int reads;

    int find(int id) throws InterruptedException {
        reads++;
        if (id % 7 == 3) {
            Thread.sleep(120);
        }
        return id * 2;
    }

    int size() {
        return reads;
    }
}
