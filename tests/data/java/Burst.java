// Fixture for grouped traces (default package; `javac -g`). Prints "burst ready",
// waits until the static `go` is set (by the debugger), then prices 60 orders
// with quantities 1..3 in an uneven, known pattern and prints its own counts:
// "burst done qty1=A qty2=B qty3=C".
public class Burst {
    static volatile boolean go = false;
    static long sink = 0;

    static int price(int qty, String sku) {
        int total = qty * 7; // LINE: priced
        return total + sku.length();
    }

    public static void main(String[] args) throws InterruptedException {
        System.out.println("burst ready");
        while (!go) {
            Thread.sleep(5);
        }
        int[] counts = new int[4];
        for (int i = 0; i < 60; i++) {
            int qty = (i * i + i / 7) % 3 + 1;
            counts[qty]++;
            sink += price(qty, "sku-" + qty);
        }
        System.out.println("burst done qty1=" + counts[1] + " qty2=" + counts[2] + " qty3=" + counts[3]);
        while (true) {
            Thread.sleep(1000);
        }
    }
}
