// Load fixture for bench/probe_load.rs (default package; `javac -g`). N worker threads
// ("worker-1".."worker-N"; first argument, default 4) call a hot method of integer
// arithmetic (second argument: rounds of its inner loop, default 200, about half a
// microsecond) as fast as they can, each on an object of its own. The third argument picks
// the method:
// - "meter" (the default): Meter.step. Its first line after its three primitive locals
//   (id, n, mixed) are set is marked "probe-hot"; it writes the field Meter.last on the line
//   marked "probe-write" and returns a long.
// - "named": Named.step, the same mixing, whose first line after its locals is marked
//   "named-hot". Every call writes the static field Named.seen, shared by every thread, with
//   a value that names the call, (id << 48) | n, on the line marked "named-write", and
//   returns that value.
// - "calls": Calls.step, the same mixing done by a call to Calls.mix, then a second call,
//   Calls.fold, for a probe that times each call a method makes. Its first line after its
//   locals is marked "calls-hot"; it writes Calls.last on the line marked "calls-write".
//
// Prints "probe bench ready" once the workers run, then every 100 ms its own throughput over
// that window: "w <calls> <nanoseconds>" (calls of step, all threads together). Commands on
// stdin: "pause" parks the workers (the windows keep coming, with no calls), "resume" lets
// them run again.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public class ProbeLoadBench {
    static final AtomicLong calls = new AtomicLong();
    static volatile boolean paused;
    static int work = 200;

    static final class Named {
        static long seen;
        long last;

        long step(int id, long n) {
            int mixed = (int) ((n * 0x9E3779B97F4A7C15L) >>> 40) ^ id;
            long acc = n + mixed; // LINE: named-hot
            for (int k = 0; k < work; k++) {
                acc = acc * 6364136223846793005L + 1442695040888963407L;
                acc ^= acc >>> 29;
            }
            last = acc;
            long named = ((long) id << 48) | n;
            seen = named; // LINE: named-write
            return named;
        }
    }

    static final class Calls {
        long last;

        long step(int id, long n) {
            int mixed = (int) ((n * 0x9E3779B97F4A7C15L) >>> 40) ^ id;
            long acc = mix(n + mixed); // LINE: calls-hot
            last = acc; // LINE: calls-write
            return fold(acc, mixed);
        }

        static long mix(long acc) {
            for (int k = 0; k < work; k++) {
                acc = acc * 6364136223846793005L + 1442695040888963407L;
                acc ^= acc >>> 29;
            }
            return acc;
        }

        static long fold(long acc, int mixed) {
            return acc ^ mixed;
        }
    }

    static final class Meter {
        long last;

        long step(int id, long n) {
            int mixed = (int) ((n * 0x9E3779B97F4A7C15L) >>> 40) ^ id;
            long acc = n + mixed; // LINE: probe-hot
            for (int k = 0; k < work; k++) {
                acc = acc * 6364136223846793005L + 1442695040888963407L;
                acc ^= acc >>> 29;
            }
            last = acc; // LINE: probe-write
            return acc ^ mixed;
        }
    }

    static void spin(int id, String shape) {
        if (shape.equals("named")) {
            spinNamed(id);
            return;
        }
        if (shape.equals("calls")) {
            spinCalls(id);
            return;
        }
        Meter meter = new Meter();
        long n = 0;
        long sink = 0;
        int batch = 0;
        while (true) {
            if (paused) {
                calls.addAndGet(batch);
                batch = 0;
                LockSupport.parkNanos(1_000_000);
                continue;
            }
            sink += meter.step(id, n++);
            // Counted in batches, so the counter is no hot spot of its own.
            if (++batch == 256) {
                calls.addAndGet(batch);
                batch = 0;
            }
            if (sink == 42) {
                System.out.println("unlikely");
            }
        }
    }

    static void spinNamed(int id) {
        Named named = new Named();
        long n = 0;
        long sink = 0;
        int batch = 0;
        while (true) {
            if (paused) {
                calls.addAndGet(batch);
                batch = 0;
                LockSupport.parkNanos(1_000_000);
                continue;
            }
            sink += named.step(id, n++);
            if (++batch == 256) {
                calls.addAndGet(batch);
                batch = 0;
            }
            if (sink == 42) {
                System.out.println("unlikely");
            }
        }
    }

    static void spinCalls(int id) {
        Calls callsOf = new Calls();
        long n = 0;
        long sink = 0;
        int batch = 0;
        while (true) {
            if (paused) {
                calls.addAndGet(batch);
                batch = 0;
                LockSupport.parkNanos(1_000_000);
                continue;
            }
            sink += callsOf.step(id, n++);
            if (++batch == 256) {
                calls.addAndGet(batch);
                batch = 0;
            }
            if (sink == 42) {
                System.out.println("unlikely");
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        if (args.length > 1) {
            work = Integer.parseInt(args[1]);
        }
        final String shape = args.length > 2 ? args[2] : "meter";
        for (int t = 1; t <= threads; t++) {
            final int id = t;
            Thread worker = new Thread(() -> spin(id, shape), "worker-" + t);
            worker.setDaemon(true);
            worker.start();
        }
        Thread control = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.equals("pause")) {
                        paused = true;
                    } else if (line.equals("resume")) {
                        paused = false;
                    }
                }
            } catch (Exception e) {
                // stdin closed: keep running
            }
        }, "control");
        control.setDaemon(true);
        control.start();
        System.out.println("probe bench ready");
        long last = calls.get();
        long at = System.nanoTime();
        while (true) {
            Thread.sleep(100);
            long c = calls.get();
            long now = System.nanoTime();
            System.out.println("w " + (c - last) + " " + (now - at));
            last = c;
            at = now;
        }
    }
}
