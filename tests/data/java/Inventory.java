// Test fixture (default package; compiled by tests/it/support/java.rs with `javac -g --release 17`,
// so local variable tables are present). Tests find breakpoint lines with
// support::java::line_of("Inventory.java", "<marker>") for the `// LINE: <marker>` comments below;
// keep every marker unique and on the statement a breakpoint should hit.
//
// Threads: "main" (reports progress), "worker-1" and "worker-2" (each owns an Inventory and calls
// process(Order) every ~20 ms). Every 10th order has qty 0, and process throws
// IllegalArgumentException for it (caught in the worker loop) — handy for exception events.
// Output: "inventory started", "<worker> started", "<worker> iteration N" every 25 iterations,
// "processed N" from main once a second. Optional argument: iterations per worker, after which
// the workers stop and main prints "inventory done" and exits (default: run forever).
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class Inventory {
    /** Orders processed by all workers together (guarded by Inventory.class). */
    static int processed = 0;

    /** Stock per SKU, per worker. */
    private final Map<String, Integer> stock = new HashMap<>();

    /** The worker that owns this inventory. */
    private final String owner;

    static final class Order {
        final int id;
        final String sku;
        final int qty;

        Order(int id, String sku, int qty) {
            this.id = id;
            this.sku = sku;
            this.qty = qty;
        }

        @Override
        public String toString() {
            return "Order#" + id + "(" + sku + " x" + qty + ")";
        }
    }

    Inventory(String owner) {
        this.owner = owner;
    }

    int process(Order o) {
        int qty = o.qty; // LINE: process-entry
        String sku = o.sku;
        List<String> notes = new ArrayList<>();
        notes.add(owner);
        notes.add(o.toString());
        if (qty == 0) {
            throw new IllegalArgumentException("empty order " + o.id); // LINE: process-throw
        }
        int before = stock.getOrDefault(sku, 0);
        int after = before + qty; // LINE: process-body
        stock.put(sku, after);
        synchronized (Inventory.class) {
            processed++; // LINE: process-count
        }
        return after; // LINE: process-return
    }

    static void work(String name, long iterations) {
        Inventory inventory = new Inventory(name);
        String[] skus = {"apple", "pear", "plum"};
        System.out.println(name + " started");
        int rejected = 0;
        for (int i = 1; i <= iterations; i++) {
            Order order = new Order(i, skus[i % skus.length], i % 10 == 0 ? 0 : i % 7 + 1);
            try {
                inventory.process(order); // LINE: worker-call
            } catch (IllegalArgumentException e) {
                rejected++;
            }
            if (i % 25 == 0) {
                System.out.println(name + " iteration " + i);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
        }
        System.out.println(name + " finished, rejected " + rejected);
    }

    public static void main(String[] args) throws InterruptedException {
        long iterations = args.length > 0 ? Long.parseLong(args[0]) : Long.MAX_VALUE;
        System.out.println("inventory started"); // LINE: main-start
        Thread w1 = new Thread(() -> work("worker-1", iterations), "worker-1");
        Thread w2 = new Thread(() -> work("worker-2", iterations), "worker-2");
        w1.start();
        w2.start();
        while (w1.isAlive() || w2.isAlive()) {
            w1.join(1000); // LINE: main-wait
            synchronized (Inventory.class) {
                System.out.println("processed " + processed);
            }
        }
        System.out.println("inventory done");
    }
}
