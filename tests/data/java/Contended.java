// Test fixture (default package; compiled by tests/it/support/java.rs with `javac -g --release 17`).
// Load generator: N threads ("contender-1".."contender-N"; first argument, default 4) increment a
// shared counter under one monitor in a hot loop. Once a second main prints "ops/s N" (increments
// in the last second). Prints "contended started" first. Optional second argument: run that many
// seconds, then print "contended done" and exit (default: forever).
public class Contended {
    static final Object LOCK = new Object();
    static long counter = 0;

    public static void main(String[] args) throws InterruptedException {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        long seconds = args.length > 1 ? Long.parseLong(args[1]) : Long.MAX_VALUE;
        System.out.println("contended started");
        for (int t = 1; t <= threads; t++) {
            Thread worker = new Thread(Contended::spin, "contender-" + t);
            worker.setDaemon(true);
            worker.start();
        }
        long last = 0;
        for (long s = 0; s < seconds; s++) {
            Thread.sleep(1000);
            long now;
            synchronized (LOCK) {
                now = counter;
            }
            System.out.println("ops/s " + (now - last)); // LINE: report
            last = now;
        }
        System.out.println("contended done");
    }

    static void spin() {
        while (true) {
            synchronized (LOCK) {
                counter++; // LINE: increment
            }
        }
    }
}
