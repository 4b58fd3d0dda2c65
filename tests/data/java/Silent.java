// Test fixture (default package) for "why did my stop point not fire?".
// A worker thread "silent-worker" calls step(n) every 10 ms; step's `n` only grows, so a
// condition `n < 0` is never true. SilentLate is loaded only once the file named by args[0]
// exists ("late loaded" is printed after), so a stop point on it stays deferred until then.
// SilentNever is never loaded. "silent ready" is printed once the worker runs.
public class Silent {
    static volatile long passes = 0;

    public static void main(String[] args) throws Exception {
        java.io.File trigger = new java.io.File(args[0]);
        Thread worker = new Thread(Silent::work, "silent-worker");
        worker.setDaemon(true);
        worker.start();
        while (passes == 0) {
            Thread.sleep(5);
        }
        System.out.println("silent ready");
        while (!trigger.exists()) {
            Thread.sleep(20);
        }
        SilentLate.touch();
        System.out.println("late loaded");
        while (true) {
            Thread.sleep(50);
        }
    }

    static void work() {
        while (true) {
            step(passes++);
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static void step(long n) {
        long doubled = n * 2; // LINE: step-body
        if (doubled < 0) {
            System.out.println("never");
        }
    }
}

class SilentLate {
    static int touched = 0;

    static void touch() {
        // LINE: late-comment
        touched++; // LINE: late-code
    }
}

class SilentNever {
    static void never() {
        System.out.println("never loaded"); // LINE: never-code
    }
}
