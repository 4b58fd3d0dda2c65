// Test fixture for what exception and trace snapshots carry (default package; compiled with
// `javac -g --release 17`). One thread "relay" loops every ~10 ms over three errands:
// relay(i) calls inner(i), which throws IllegalArgumentException("bad i"); relay catches it and
// throws the same instance again (one exception, two throw events), and the loop catches it;
// npe(i) calls length() on a null local `s` (a JVM-thrown NPE: its helpful text is computed by
// getMessage(), never stored); submit(i) runs an anonymous Runnable that captures the locals
// `order` and `out` (synthetic fields val$order and val$out); stamp(i) runs on a fresh Relay
// that is garbage right after. With the argument "gc" the loop calls System.gc() every 20
// iterations. Prints "relay started" once the thread exists.
public class Relay {
    static String nothing(int i) {
        return i < 0 ? "never" : null;
    }

    static void inner(int i) {
        throw new IllegalArgumentException("bad " + i); // LINE: inner-throw
    }

    static void relay(int i) {
        try {
            inner(i);
        } catch (IllegalArgumentException e) {
            throw e; // LINE: relay-rethrow
        }
    }

    static int npe(int i) {
        String s = nothing(i);
        return s.length(); // LINE: npe
    }

    static int submit(int i) {
        final String order = "order-" + i;
        final int[] out = new int[1];
        Runnable r = new Runnable() {
            @Override
            public void run() {
                out[0] = order.length(); // LINE: anon-run
            }
        };
        r.run();
        return out[0];
    }

    int stamp(int i) {
        return i * 2; // LINE: stamp
    }

    static void loop(boolean gc) {
        for (int i = 1; ; i++) {
            try {
                relay(i);
            } catch (IllegalArgumentException e) {
                // expected
            }
            try {
                npe(i);
            } catch (NullPointerException e) {
                // expected
            }
            submit(i);
            new Relay().stamp(i);
            if (gc && i % 20 == 0) {
                System.gc();
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        boolean gc = args.length > 0 && args[0].equals("gc");
        new Thread(() -> loop(gc), "relay").start();
        System.out.println("relay started");
        while (true) {
            Thread.sleep(1000);
        }
    }
}
