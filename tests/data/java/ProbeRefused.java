// Test fixture (default package): a loop that sleeps, swallows the interrupt in an empty catch,
// then prints its version and a count every 10 ms. A probe on the line after the empty catch
// was refused by the JVM's verifier (FAILS_VERIFICATION); the probe-refusal tests reload a v2
// of version() and check the v2 still runs after later attaches. Output: "probe refused
// started", then "v1 <n>" lines.
public class ProbeRefused {
    static volatile long sink;

    static String version() {
        return "v1";
    }

    static void spin() {
        long n = 0;
        while (true) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {}
            n++; // LINE: after-catch
            System.out.println(version() + " " + n);
        }
    }

    public static void main(String[] args) {
        System.out.println("probe refused started");
        spin();
    }
}
