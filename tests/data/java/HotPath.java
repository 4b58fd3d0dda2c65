// Fixture for the overhead guard (default package; `javac -g`): a request
// path served at a paced ~15,000 calls/s by 4 worker threads. Each worker
// paces itself against the clock (it catches up when it was held, up to a
// burst), so what it achieves shows what the debugger leaves it. Prints
// "hot ready" once the workers run, then, every 500 ms, its own throughput
// over the last interval: "hot rate N calls/s total T".
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public class HotPath {
    static final int WORKERS = 4;
    static final long TARGET_PER_SECOND = 15_000;
    static final AtomicLong calls = new AtomicLong();
    static volatile long sink;

    static long handle(int cents, String sku) {
        long total = cents * 3L + sku.length(); // LINE: hot
        sink += total;
        return total;
    }

    public static void main(String[] args) throws InterruptedException {
        long period = 1_000_000_000L * WORKERS / TARGET_PER_SECOND;
        for (int w = 0; w < WORKERS; w++) {
            final int lane = w;
            Thread t = new Thread(() -> {
                long next = System.nanoTime();
                int n = 0;
                while (true) {
                    long now = System.nanoTime();
                    if (now < next) {
                        LockSupport.parkNanos(next - now);
                        continue;
                    }
                    // Never more than 50 ms of catching up at once.
                    next = Math.max(next + period, now - 50_000_000L);
                    n++;
                    handle(100 + (n * 7 + lane) % 900, "sku-" + (n % 10));
                    calls.incrementAndGet();
                }
            }, "worker-" + w);
            t.setDaemon(true);
            t.start();
        }
        System.out.println("hot ready");
        long last = calls.get();
        long lastAt = System.nanoTime();
        while (true) {
            Thread.sleep(500);
            long c = calls.get();
            long at = System.nanoTime();
            long rate = (c - last) * 1_000_000_000L / Math.max(1, at - lastAt);
            System.out.println("hot rate " + rate + " calls/s total " + c);
            last = c;
            lastAt = at;
        }
    }
}
