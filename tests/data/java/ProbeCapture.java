// What a probe's snapshot shows beyond the frame's own locals: a caller
// chain (outer -> middle -> inner), an anonymous Runnable capturing
// locals of the method that made it, fields written with a known old value
// (a long and an int of a class outside any nest), an inner class writing
// its outer class's private field through nest-based access, and a
// package-private field three other classes write (one a subclass naming
// it through itself). It prints "probe capture started" once every probed
// method has run.
public class ProbeCapture {
    private int hits;
    static volatile boolean stop;

    final class Bump {
        void bump() {
            hits++; // LINE: capture-nestmate-write
        }
    }

    static int outer(int n) {
        return middle(n) + 1; // LINE: capture-outer
    }

    static int middle(int n) {
        return inner(n) * 2; // LINE: capture-middle
    }

    static int inner(int n) {
        int doubled = n * 2; // LINE: capture-inner
        return doubled;
    }

    static Runnable task(final int round) {
        final String tag = "tag-" + round;
        return new Runnable() {
            public void run() {
                int len = tag.length(); // LINE: capture-anon
                if (len + round < 0) {
                    System.out.println("never");
                }
            }
        };
    }

    public static void main(String[] args) throws Exception {
        ProbeCapture self = new ProbeCapture();
        ProbeCapture.Bump bump = self.new Bump();
        ProbeCaptureTally tally = new ProbeCaptureTally();
        // Once here, so every class the tests look up is loaded.
        outer(0);
        task(0).run();
        tally.add(5);
        bump.bump();
        ProbeCaptureSubGauge gauge = new ProbeCaptureSubGauge();
        ProbeCaptureRaiser raiser = new ProbeCaptureRaiser();
        ProbeCaptureLowerer lowerer = new ProbeCaptureLowerer();
        raiser.raise(gauge);
        lowerer.lower(gauge);
        gauge.surge();
        Thread w = new Thread(() -> {
            int round = 0;
            while (!stop) {
                round++;
                outer(round);
                task(round).run();
                tally.add(5);
                bump.bump();
                raiser.raise(gauge);
                lowerer.lower(gauge);
                gauge.surge();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "capture-worker");
        w.setDaemon(true);
        w.start();
        System.out.println("probe capture started");
        while (true) {
            Thread.sleep(1000);
        }
    }
}

// A top-level class outside any nest: only its own code writes its
// private fields, so a write probe on it sees every write.
final class ProbeCaptureTally {
    private long total;
    private int count;

    void add(long n) {
        total = total + n; // LINE: capture-total
        count = count + 1;
    }
}

// A field any class of the package may write: a write probe in this class
// alone would see none of its writes.
class ProbeCaptureGauge {
    int level;
}

// A subclass writing the inherited field by its simple name, which the
// class file names as ProbeCaptureSubGauge.level.
final class ProbeCaptureSubGauge extends ProbeCaptureGauge {
    void surge() {
        level = level + 10; // LINE: capture-surge
    }
}

final class ProbeCaptureRaiser {
    void raise(ProbeCaptureGauge g) {
        g.level = g.level + 2; // LINE: capture-raise
    }
}

final class ProbeCaptureLowerer {
    void lower(ProbeCaptureGauge g) {
        g.level = g.level - 1; // LINE: capture-lower
    }
}
