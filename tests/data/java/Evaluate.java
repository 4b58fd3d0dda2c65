// Fixture for expression evaluation: every kind of local, fields, statics,
// a getter chain with call counters, overloads, the four structurally-read
// collections plus a TreeMap, and byte[] in several charsets. The worker
// thread "evaluator" reaches the `// LINE: eval-here` line every 50 ms.
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

public class Evaluate {
    static int STATIC_COUNT = 42;
    static String GREETING = "hello";
    static int getBCalls = 0;
    static int getDCalls = 0;
    static int toStringCalls = 0;

    static class D {
        String name = "dee";
    }

    static class C {
        D d = null;

        D getD() {
            getDCalls++;
            return d;
        }
    }

    static class B {
        C c = new C();
    }

    static class A {
        B getB() {
            getBCalls++;
            return new B();
        }
    }

    static class Item {
        final String sku;
        final int qty;

        Item(String sku, int qty) {
            this.sku = sku;
            this.qty = qty;
        }

        String getSku() {
            return sku;
        }

        @Override
        public String toString() {
            toStringCalls++;
            return sku + "x" + qty;
        }
    }

    int instanceField = 7;
    String label = "evaluator";
    List<Item> items = new ArrayList<>();
    Map<String, Integer> counts = new HashMap<>();
    Map<String, Integer> ordered = new LinkedHashMap<>();
    Map<String, Item> concurrent = new ConcurrentHashMap<>();
    Map<String, Integer> sorted = new TreeMap<>();
    A a = new A();

    static String describe(int x) {
        return "int:" + x;
    }

    static String describe(String s) {
        return "string:" + s;
    }

    static String describe(long x) {
        return "long:" + x;
    }

    int twice(int x) {
        return 2 * x;
    }

    // Outlives any invocation budget: the JVM cannot cancel it.
    static int sleepy(int ms) throws InterruptedException {
        Thread.sleep(ms);
        return ms;
    }

    void work(int round) throws InterruptedException {
        int i = round;
        long big = 1234567890123L;
        double ratio = 0.5;
        float f = 1.5f;
        char ch = 'x';
        boolean flag = true;
        byte b = 7;
        short s = 300;
        String text = "héllo";
        byte[] utf8 = "héllo wörld".getBytes(StandardCharsets.UTF_8);
        byte[] latin1 = "héllo".getBytes(StandardCharsets.ISO_8859_1);
        char[] chars = {'a', 'b', 'c'};
        int[] numbers = {3, 1, 4, 1, 5, 9, 2, 6};
        Object nothing = null;
        Integer boxed = 99;
        Thread.sleep(50); // LINE: eval-here
    }

    public static void main(String[] args) throws Exception {
        Evaluate e = new Evaluate();
        for (int k = 0; k < 5; k++) {
            e.items.add(new Item("sku-" + k, k * 2));
            e.counts.put("k" + k, k * 10);
            e.ordered.put("o" + k, k);
            e.concurrent.put("c" + k, new Item("c-" + k, k));
            e.sorted.put("t" + k, k + 100);
        }
        Thread worker = new Thread(() -> {
            for (int round = 0; ; round++) {
                try {
                    e.work(round);
                } catch (InterruptedException ex) {
                    return;
                }
            }
        }, "evaluator");
        worker.start();
        // Ready only once the evaluator thread exists: tests look it up by name.
        System.out.println("evaluate ready");
        worker.join();
    }
}
