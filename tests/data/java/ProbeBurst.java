// A burst of a known number of calls, for a probe whose ring overflows:
// prints "probe burst ready" once Tally.tick has run, waits until the
// static `go` is set (by the debugger), then 4 threads call Tally.tick
// 500,000 times each, as fast as they can, and it prints its own count:
// "probe burst done calls=N".
public class ProbeBurst {
    static volatile boolean go = false;
    static final int THREADS = 4;
    static final int PER_THREAD = 500_000;

    static final class Tally {
        long sum;

        long tick(int id, long n) {
            long x = n * 31 + id; // LINE: burst-tick
            sum += x;
            return x;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        new Tally().tick(0, 0);
        System.out.println("probe burst ready");
        while (!go) {
            Thread.sleep(5);
        }
        Thread[] workers = new Thread[THREADS];
        long[] made = new long[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int id = t;
            workers[t] = new Thread(() -> {
                Tally mine = new Tally();
                for (int i = 0; i < PER_THREAD; i++) {
                    mine.tick(id, i);
                    made[id]++;
                }
            }, "burst-" + t);
            workers[t].start();
        }
        long calls = 0;
        for (int t = 0; t < THREADS; t++) {
            workers[t].join();
            calls += made[t];
        }
        System.out.println("probe burst done calls=" + calls);
        while (true) {
            Thread.sleep(1000);
        }
    }
}
