// Test fixture (default package): a service whose main thread waits for good in join() while
// its worker "joined-worker" runs application code, calling work() about a hundred times a
// millisecond. With the argument "idle" the worker waits for good too, so no thread reaches a
// line of application code. Prints "joined ready" once main is in join().
public class Joined {
    static volatile long total;
    static final Object never = new Object();

    static long work(long n) {
        total += n; // LINE: joined-work
        return total;
    }

    public static void main(String[] args) throws Exception {
        final boolean idle = args.length > 0 && args[0].equals("idle");
        final Thread main = Thread.currentThread();
        Thread worker = new Thread(() -> {
            if (idle) {
                synchronized (never) {
                    while (true) {
                        try {
                            never.wait();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            }
            long n = 0;
            while (true) {
                work(++n);
                if (n % 100 == 0) {
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }, "joined-worker");
        worker.setDaemon(true);
        worker.start();
        // Ready once main waits in join() (and an idle worker in wait()).
        // (Its loop is not the lambda's first instruction: a method that opens
        // with a loop head cannot take a probe yet, and this class must.)
        new Thread(() -> {
            long spins = 0;
            while (main.getState() != Thread.State.WAITING
                    || (idle && worker.getState() != Thread.State.WAITING)) {
                spins++;
                Thread.onSpinWait();
            }
            System.out.println("joined ready after " + spins + " spins");
        }, "joined-herald").start();
        worker.join();
    }
}
