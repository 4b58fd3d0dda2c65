// Test fixture (default package): one replica of a hot service. A worker
// thread "replica-worker" calls charge(n, amount) up to a million times a
// second. Started with the argument "bad", every 200,000th call passes a
// negative amount (-n) and then prints "bad call <n>"; "calm" makes a call
// every 50 us or so and never a bad one; any other argument (or none)
// never makes a bad one. Prints "replica ready" once the worker runs.
public class Replica {
    static volatile long total;

    static void charge(long n, long amount) {
        total += amount; // LINE: charge
    }

    public static void main(String[] args) throws Exception {
        final boolean bad = args.length > 0 && args[0].equals("bad");
        final int burst = args.length > 0 && args[0].equals("calm") ? 20 : 2_000;
        Thread worker = new Thread(() -> {
            long n = 0;
            while (true) {
                n++;
                long amount = (bad && n % 200_000 == 0) ? -n : (n % 100) + 1;
                charge(n, amount);
                if (amount < 0) {
                    System.out.println("bad call " + n);
                }
                if (n % burst == 0) {
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }, "replica-worker");
        worker.setDaemon(false);
        worker.start();
        System.out.println("replica ready");
        // The main thread keeps reaching application code (a probe's
        // set-up borrows such a thread).
        long beats = 0;
        while (worker.isAlive()) {
            beats = heartbeat(beats);
            Thread.sleep(5);
        }
    }

    static long heartbeat(long beats) {
        return beats + 1;
    }
}
