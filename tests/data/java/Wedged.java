// Test fixture (default package; compiled by tests/it/support/java.rs with `javac -g --release 17`).
// A wedged program: "lock-a-taker" and "lock-b-taker" deadlock on two monitors (each holds one and
// blocks entering the other); N "pool-worker-#" threads (first argument, default 50) park at one
// site in one pool; M "deep-#" threads (second argument, default 0) recurse D frames deep (third
// argument, default 60) and park there. Prints "wedged ready" once every one of them is blocked or
// parked, and keeps running (main prints "tick N" every 200 ms).
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;

public class Wedged {
    static final Object LOCK_A = new Object();
    static final Object LOCK_B = new Object();
    static final CyclicBarrier BOTH_HOLD = new CyclicBarrier(2);
    static final CountDownLatch NEVER = new CountDownLatch(1);

    public static void main(String[] args) throws Exception {
        int pool = args.length > 0 ? Integer.parseInt(args[0]) : 50;
        int deep = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        int depth = args.length > 2 ? Integer.parseInt(args[2]) : 60;
        List<Thread> all = new ArrayList<>();
        all.add(start("lock-a-taker", () -> take(LOCK_A, LOCK_B)));
        all.add(start("lock-b-taker", () -> take(LOCK_B, LOCK_A)));
        for (int i = 1; i <= pool; i++) {
            all.add(start("pool-worker-" + i, Wedged::park));
        }
        for (int i = 1; i <= deep; i++) {
            all.add(start("deep-" + i, () -> descend(depth)));
        }
        for (int i = 0; i < all.size(); i++) {
            Thread.State want = i < 2 ? Thread.State.BLOCKED : Thread.State.WAITING;
            while (all.get(i).getState() != want) {
                Thread.sleep(5);
            }
        }
        System.out.println("wedged ready");
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

    static void take(Object first, Object second) {
        synchronized (first) {
            try {
                BOTH_HOLD.await();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            synchronized (second) { System.out.println("never"); } // LINE: second lock
        }
    }

    static void park() {
        try {
            NEVER.await(); // LINE: park
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void descend(int n) {
        if (n <= 3) {
            park();
        } else {
            descend(n - 1);
        }
    }
}
