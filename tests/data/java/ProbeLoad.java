// A contended hot path for the probe engine: worker threads charge
// accounts as fast as they can; about one charge in 10,000 is negative
// (the rare bad call), and `settle` sometimes runs slow. It prints
// "probe load started" once every method the tests probe has run.
public class ProbeLoad {
    static long charged;
    static final long STARTED = System.nanoTime(); // LINE: probe-clinit
    static volatile boolean stop;

    static final class Ledger {
        private long total;
        private int count;

        long charge(int amountCents, long account) {
            int fee = amountCents / 100; // LINE: probe-line
            total += amountCents - fee; // LINE: probe-write
            count++;
            return total;
        }

        int settle(int n) throws InterruptedException {
            if (n % 50 == 0) {
                Thread.sleep(3);
            }
            if (n % 97 == 0) {
                throw new IllegalStateException("settle " + n);
            }
            return n * 2;
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        Ledger ledger = new Ledger();
        ledger.charge(1, 0);
        ledger.settle(1);
        for (int t = 0; t < threads; t++) {
            final int seed = t;
            Thread w = new Thread(() -> {
                Ledger mine = new Ledger();
                long i = seed;
                while (!stop) {
                    i++;
                    int amount = (i % 10_000 == 0) ? -(int) (i % 977) - 1 : (int) (i % 5000);
                    mine.charge(amount, i);
                }
            }, "charger-" + t);
            w.setDaemon(true);
            w.start();
        }
        Thread s = new Thread(() -> {
            int n = 0;
            while (!stop) {
                n++;
                try {
                    ledger.settle(n);
                    Thread.sleep(1);
                } catch (IllegalStateException e) {
                    // expected now and then
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "settler");
        s.setDaemon(true);
        s.start();
        System.out.println("probe load started");
        long last = System.nanoTime();
        while (true) {
            Thread.sleep(1000);
        }
    }
}
