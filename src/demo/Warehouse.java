// The program `jvmscope demo` compiles and runs under the debugger: a small
// warehouse whose pickers fill orders, so there is something to watch.
import java.util.HashMap;
import java.util.Map;

public class Warehouse {
    static final Map<String, Integer> stock = new HashMap<>();
    static int filled = 0;

    static int pick(String sku, int qty) {
        int before = stock.getOrDefault(sku, 100);
        int after = before - qty;
        stock.put(sku, after); // demo: trace
        filled++; // demo: stop
        return after;
    }

    public static void main(String[] args) throws Exception {
        System.out.println("warehouse open");
        String[] skus = {"apple", "pear", "plum"};
        Thread picker = new Thread(() -> {
            for (int i = 0; ; i++) {
                int left = pick(skus[i % skus.length], 1 + i % 3);
                if (i % 10 == 0) {
                    System.out.println("order " + i + " filled, " + left + " left");
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "picker-1");
        picker.start();
        picker.join();
    }
}
