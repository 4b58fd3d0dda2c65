// Test fixture (default package) for the overhead guard handing a wire
// stop point to a probe. LateHot$Work is loaded only once the file named
// by args[0] exists, so a stop point set on it before then is deferred
// and goes over the wire (a probe needs the loaded class). Then two
// threads call Work.step as fast as they can; its `n` is a multiple of
// 1000 about once in 1000 calls. "late hot waiting" is printed before the
// wait, "late hot started" once both threads have called step.
public class LateHot {
    static volatile long calls;

    static final class Work {
        static long step(long n) {
            long doubled = n * 2; // LINE: late-hot-step
            calls++;
            return doubled;
        }
    }

    public static void main(String[] args) throws Exception {
        java.io.File trigger = new java.io.File(args[0]);
        System.out.println("late hot waiting");
        while (!trigger.exists()) {
            Thread.sleep(20);
        }
        for (int t = 0; t < 2; t++) {
            final long seed = t;
            Thread w = new Thread(() -> {
                long sum = 0;
                for (long i = seed; ; i += 2) {
                    sum += Work.step(i);
                }
            }, "late-hot-" + t);
            w.setDaemon(true);
            w.start();
        }
        while (calls < 2) {
            Thread.sleep(5);
        }
        System.out.println("late hot started");
        while (true) {
            Thread.sleep(50);
        }
    }
}
