// Test fixture (default package): threads burn CPU in Burner.spin while others idle, for the
// CPU profile tests. Args: [burners, default 1]. Threads "burner-1".."burner-N" call spin()
// in a loop; "idle-sleeper" sleeps; "idle-waiter" waits on a monitor nobody notifies.
// Output: "burner ready" once every thread runs, then every second "rate=<spins per second>"
// (the throughput a profiler's cost is measured against).
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

public class Burner {
    static volatile long sink;
    static final AtomicLong spins = new AtomicLong();

    static long spin(long seed) {
        long x = seed;
        for (int i = 0; i < 100_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    static void work() {
        long seed = 1;
        while (true) {
            seed = spin(seed);
            sink = seed;
            spins.incrementAndGet();
        }
    }

    public static void main(String[] args) throws Exception {
        int burners = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        CountDownLatch started = new CountDownLatch(burners + 2);
        for (int i = 1; i <= burners; i++) {
            Thread t = new Thread(() -> {
                started.countDown();
                work();
            }, "burner-" + i);
            t.setDaemon(true);
            t.start();
        }
        Thread sleeper = new Thread(() -> {
            started.countDown();
            while (true) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "idle-sleeper");
        sleeper.setDaemon(true);
        sleeper.start();
        Object never = new Object();
        Thread waiter = new Thread(() -> {
            started.countDown();
            synchronized (never) {
                try {
                    never.wait();
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "idle-waiter");
        waiter.setDaemon(true);
        waiter.start();
        started.await();
        System.out.println("burner ready");
        long last = spins.get();
        long lastAt = System.nanoTime();
        while (true) {
            Thread.sleep(1000);
            long now = spins.get();
            long at = System.nanoTime();
            System.out.println("rate=" + (now - last) * 1_000_000_000L / (at - lastAt));
            last = now;
            lastAt = at;
        }
    }
}
