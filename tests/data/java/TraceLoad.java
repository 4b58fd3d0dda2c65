// Load fixture for bench/trace_load.rs (default package; `javac -g`). N busy threads
// ("load-1".."load-N"; first argument, default 4) contend on one monitor and call record(...)
// in a hot loop; record has locals (an int, a long, a String) so a trace has something to read.
// Prints "trace load started", then every second "ops/s N" (calls of record in that second,
// all threads together).
public class TraceLoad {
    static final Object LOCK = new Object();
    static long total = 0;
    static long calls = 0;

    static long record(int id, long i, String tag) {
        long mixed = i * 31 + id;
        synchronized (LOCK) {
            total += mixed & 7; // LINE: hot
            calls++;
        }
        return mixed ^ tag.length();
    }

    static void spin(int id) {
        String tag = "load-" + id;
        long sink = 0;
        for (long i = 0; ; i++) {
            sink += record(id, i, tag);
            if (sink == 42) {
                System.out.println("unlikely");
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        System.out.println("trace load started");
        for (int t = 1; t <= threads; t++) {
            final int id = t;
            Thread worker = new Thread(() -> spin(id), "load-" + t);
            worker.setDaemon(true);
            worker.start();
        }
        long last = 0;
        while (true) {
            Thread.sleep(1000);
            long now;
            synchronized (LOCK) {
                now = calls;
            }
            System.out.println("ops/s " + (now - last));
            last = now;
        }
    }
}
