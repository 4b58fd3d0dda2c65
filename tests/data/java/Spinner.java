// Test fixture (default package): one thread burns a core while others idle, for the
// hot-threads tests. Threads: "busy-spinner-worker" (a name longer than the 15 bytes Linux
// keeps for a native thread name) spins in burn(); "idle-sleeper-1".."idle-sleeper-3" sleep;
// "idle-waiter" waits on a monitor nobody notifies. Output: "spinner ready" once every thread
// runs (printed once).
public class Spinner {
    static volatile long sink;

    static long burn(long seed) {
        long x = seed;
        for (int i = 0; i < 1_000_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L; // LINE: burn
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(5);
        Thread busy = new Thread(() -> {
            started.countDown();
            long seed = 1;
            while (true) {
                seed = burn(seed);
                sink = seed;
            }
        }, "busy-spinner-worker");
        busy.setDaemon(true);
        busy.start();
        for (int i = 1; i <= 3; i++) {
            Thread idle = new Thread(() -> {
                started.countDown();
                while (true) {
                    try {
                        Thread.sleep(1000);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "idle-sleeper-" + i);
            idle.setDaemon(true);
            idle.start();
        }
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
        System.out.println("spinner ready");
        while (true) {
            Thread.sleep(1000);
        }
    }
}
