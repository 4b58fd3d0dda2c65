// Test fixture (package knots; compiled by tests/it/support/java.rs with `javac -g --release 17`).
// Three deadlock cycles of two threads each, every one of them on a different kind of lock:
//   "rl-a" / "rl-b": each holds one ReentrantLock and lock()s the other (java.util.concurrent only);
//   "mon-a" / "mon-b": each holds one monitor and blocks entering the other (synchronized only);
//   "mix-monitor-first" holds a monitor and lock()s a ReentrantLock that "mix-lock-first" holds,
//   which blocks entering that monitor (one edge of each kind).
// Beside them, no cycle: "lock-holder" holds a ReentrantLock and the write lock of a
// ReentrantReadWriteLock and sleeps; "lock-waiter" parks in lock() of the first, "rw-reader" in
// readLock().lock() of the second. Prints "knots ready" only once every waiting thread is queued
// on its lock and parked (or blocked entering its monitor), then "tick N" every 200 ms.
package knots;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

public class Knots {
    static final ReentrantLock RL_A = new ReentrantLock();
    static final ReentrantLock RL_B = new ReentrantLock();
    static final Object MON_A = new Object();
    static final Object MON_B = new Object();
    static final Object MIX_MON = new Object();
    static final ReentrantLock MIX_RL = new ReentrantLock();
    static final ReentrantLock HELD = new ReentrantLock();
    static final ReentrantReadWriteLock RW = new ReentrantReadWriteLock();

    /** A thread and what it must be doing before the fixture is ready. */
    record Waiter(Thread thread, ReentrantLock lock, ReentrantReadWriteLock rw) {
        boolean stuck() {
            Thread.State s = thread.getState();
            if (lock != null) {
                return s == Thread.State.WAITING && lock.hasQueuedThread(thread);
            }
            if (rw != null) {
                return s == Thread.State.WAITING && rw.hasQueuedThread(thread);
            }
            return s == Thread.State.BLOCKED;
        }
    }

    public static void main(String[] args) throws Exception {
        CyclicBarrier rl = new CyclicBarrier(2);
        CyclicBarrier mon = new CyclicBarrier(2);
        CyclicBarrier mix = new CyclicBarrier(2);
        CyclicBarrier held = new CyclicBarrier(2);
        List<Waiter> all = new ArrayList<>();
        all.add(new Waiter(start("rl-a", () -> locks(RL_A, RL_B, rl)), RL_B, null));
        all.add(new Waiter(start("rl-b", () -> locks(RL_B, RL_A, rl)), RL_A, null));
        all.add(new Waiter(start("mon-a", () -> monitors(MON_A, MON_B, mon)), null, null));
        all.add(new Waiter(start("mon-b", () -> monitors(MON_B, MON_A, mon)), null, null));
        all.add(new Waiter(start("mix-monitor-first", () -> monitorThenLock(mix)), MIX_RL, null));
        all.add(new Waiter(start("mix-lock-first", () -> lockThenMonitor(mix)), null, null));
        start("lock-holder", () -> hold(held));
        held.await();
        all.add(new Waiter(start("lock-waiter", () -> acquire(HELD)), HELD, null));
        all.add(new Waiter(start("rw-reader", Knots::read), null, RW));
        for (Waiter w : all) {
            while (!w.stuck()) {
                Thread.sleep(5);
            }
        }
        System.out.println("knots ready");
        for (long tick = 1; ; tick++) {
            Thread.sleep(200);
            System.out.println("tick " + tick);
        }
    }

    static Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static void locks(ReentrantLock first, ReentrantLock second, CyclicBarrier both) {
        first.lock();
        await(both);
        second.lock(); // LINE: second lock()
    }

    static void monitors(Object first, Object second, CyclicBarrier both) {
        synchronized (first) {
            await(both);
            synchronized (second) { System.out.println("never"); } // LINE: second monitor
        }
    }

    static void monitorThenLock(CyclicBarrier both) {
        synchronized (MIX_MON) {
            await(both);
            MIX_RL.lock(); // LINE: mix lock()
        }
    }

    static void lockThenMonitor(CyclicBarrier both) {
        MIX_RL.lock();
        await(both);
        synchronized (MIX_MON) { System.out.println("never"); } // LINE: mix monitor
    }

    static void hold(CyclicBarrier held) {
        HELD.lock();
        RW.writeLock().lock();
        await(held);
        while (true) {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static void acquire(ReentrantLock lock) {
        lock.lock(); // LINE: waiter lock()
    }

    static void read() {
        RW.readLock().lock(); // LINE: reader lock()
    }
}
