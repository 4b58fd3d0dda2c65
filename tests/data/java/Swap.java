// Fixture for the code tools (source window, stale check, hot reload).
// The thread "swapper" prints "swap <label()> <compute(7)> <Helper.tag()>"
// every 20 ms, forever. The tests recompile edited copies of this file:
// keep the LINE markers and the text they replace.
public class Swap {
    static String label() {
        return "v1"; // LINE: swap-label
    }

    static int compute(int x) {
        return x * 2; // LINE: swap-compute
    }

    static class Helper {
        static String tag() {
            return "h"; // LINE: swap-tag
        }
    }

    public static void main(String[] args) throws Exception {
        Thread worker = new Thread(() -> {
            while (true) {
                System.out.println("swap " + label() + " " + compute(7) + " " + Helper.tag());
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "swapper");
        worker.start();
        worker.join();
    }
}
