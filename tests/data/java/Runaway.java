// Test fixture (default package; compiled by tests/it/support/java.rs with `javac -g --release 17`).
// Methods that never return, for cancelling an invocation past its budget: a busy spin, a sleep,
// an Object.wait, a LockSupport.park, and a stubborn loop that swallows every Throwable for a given
// time and so cannot be cancelled. The thread "runner" runs its own code: it passes
// `// LINE: runaway-here` every 20 ms and counts its rounds in `rounds`; a sleep of its own cut
// short by an interrupt left behind by a cancel is counted in `interruptions`. The thread "ticker"
// calls a method every 5 ms, as a busy application's threads do. Prints "runaway ready" once the
// runner has passed the line twice (so the class, its methods and both threads exist).
import java.util.concurrent.locks.LockSupport;

public class Runaway {
    static volatile long rounds;
    static volatile long interruptions;
    static volatile boolean forever = true;
    static final Object LOCK = new Object();

    static long spin() {
        long n = 0;
        while (forever) {
            n++;
        }
        return n;
    }

    static long sleep() throws InterruptedException {
        Thread.sleep(Long.MAX_VALUE);
        return 0;
    }

    static long await() throws InterruptedException {
        synchronized (LOCK) {
            while (forever) {
                LOCK.wait();
            }
        }
        return 0;
    }

    static long park() {
        while (forever) {
            LockSupport.park(LOCK);
        }
        return 0;
    }

    static long stubborn(long ms) {
        long swallowed = 0;
        long end = System.currentTimeMillis() + ms;
        while (System.currentTimeMillis() < end) {
            try {
                Thread.sleep(10);
            } catch (Throwable t) {
                swallowed++;
            }
        }
        return swallowed;
    }

    static volatile long ticks;

    static void tick() {
        ticks++;
    }

    static void round(long n) {
        rounds = n;
        try {
            Thread.sleep(20); // LINE: runaway-here
        } catch (InterruptedException e) {
            interruptions++;
        }
    }

    public static void main(String[] args) throws Exception {
        Thread runner = new Thread(() -> {
            for (long n = 1; ; n++) {
                round(n);
            }
        }, "runner");
        runner.setDaemon(true);
        runner.start();
        Thread ticker = new Thread(() -> {
            while (true) {
                tick();
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "ticker");
        ticker.setDaemon(true);
        ticker.start();
        while (rounds < 2 || ticks < 1) {
            Thread.sleep(5);
        }
        System.out.println("runaway ready");
        runner.join();
    }
}
