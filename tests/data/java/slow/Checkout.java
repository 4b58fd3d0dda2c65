// A handler whose data call is slow for some inputs, for timing the calls
// one method makes. `checkout` asks the store (120 ms for id % 7 == 3, at
// once otherwise), prices 5 lines in a loop (4 ms each), checks a coupon
// that, for the slow ids, takes 10 ms and then throws (caught), and logs
// in a finally. For a slow id the truth is: find 120 ms of about 150 ms
// (80 %), price 5 calls and 20 ms, coupon 10 ms and a throw. It prints
// "checkout started" once every method has run.
package slow;

public class Checkout {
    static final long FIND_MS = 120;
    static final long PRICE_MS = 4;
    static final int LINES = 5;
    static final long COUPON_MS = 10;

    private final Store store = new Store();
    private int logged;

    int checkout(int id) throws InterruptedException {
        int total = 0;
        try {
            total += store.find(id);
            for (int line = 0; line < LINES; line++) {
                total += price(line);
            }
            try {
                total += coupon(id);
            } catch (IllegalStateException e) {
                total--;
            }
        } finally {
            log(id);
        }
        return total;
    }

    int price(int line) throws InterruptedException {
        Thread.sleep(PRICE_MS);
        return line;
    }

    int coupon(int id) throws InterruptedException {
        if (id % 7 == 3) {
            Thread.sleep(COUPON_MS);
            throw new IllegalStateException("expired coupon " + id);
        }
        return 1;
    }

    void log(int id) {
        logged += id;
    }

    public static void main(String[] args) throws Exception {
        Checkout c = new Checkout();
        for (int i = 0; i < 20; i++) {
            c.checkout(i);
        }
        c.store.size();
        System.out.println("checkout started");
        for (int i = 0; ; i++) {
            c.checkout(i % 20);
            c.store.size();
        }
    }
}
