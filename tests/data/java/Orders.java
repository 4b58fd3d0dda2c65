// Test fixture for stop points (default package; compiled with `javac -g --release 17`).
// Two worker threads ("orders-a", "orders-b") each own an Orders and loop every ~10 ms:
// place(qty) (an instance method with a try/finally: the finally line has a normal and an
// exception path; every 5th qty is -1 and throws IllegalStateException, caught in loop),
// label(i) (a static method), size() and describe() (more exits of the class). Every 100
// iterations a thread "doomed-N" throws an uncaught IllegalStateException("doomed N").
// Writes: static `total` (in place's finally) and instance `count`.
// Optional argument: a directory; when the file "load-1" (then "load-2") appears there, a new
// classloader (parent: bootstrap) loads its own copy of OrdersPlugin and a thread "plugin-1"
// ("plugin-2") runs it every ~10 ms. Prints "orders started", "orders tick N" every 100
// iterations of orders-a, "plugin N loaded".
import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;

public class Orders {
    static int total = 0;

    int count = 0;
    final String name;

    Orders(String name) {
        this.name = name;
    }

    int place(int qty) {
        int before = count;
        try {
            if (qty < 0) {
                throw new IllegalStateException("negative qty " + qty); // LINE: place-throw
            }
            count = before + qty; // LINE: place-add
            return count;
        } finally {
            total++; // LINE: place-finally
        }
    }

    static String label(int n) {
        String s = "order-" + n; // LINE: label
        return s;
    }

    int size() {
        return count;
    }

    String describe() {
        return name + ":" + count;
    }

    static void loop(Orders o) {
        for (int i = 1; ; i++) {
            int qty = i % 5 == 0 ? -1 : i % 3 + 1;
            try {
                o.place(qty);
            } catch (IllegalStateException e) {
                qty = 0;
            }
            String l = label(i); // LINE: loop-label
            o.size();
            o.describe();
            if (i % 100 == 0 && o.name.equals("a")) {
                System.out.println("orders tick " + i);
                int n = i / 100;
                Thread doomed = new Thread(() -> {
                    throw new IllegalStateException("doomed " + n); // LINE: doomed
                }, "doomed-" + n);
                doomed.start();
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static void plugins(File dir) throws Exception {
        URL cp = new File(System.getProperty("java.class.path")).toURI().toURL();
        for (int n = 1; n <= 2; n++) {
            File trigger = new File(dir, "load-" + n);
            while (!trigger.exists()) {
                Thread.sleep(20);
            }
            ClassLoader loader = new URLClassLoader(new URL[] {cp}, null);
            Runnable plugin = (Runnable) loader.loadClass("OrdersPlugin").getDeclaredConstructor().newInstance();
            System.out.println("plugin " + n + " loaded");
            Thread t = new Thread(() -> {
                while (true) {
                    plugin.run();
                    try {
                        Thread.sleep(10);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "plugin-" + n);
            t.setDaemon(true);
            t.start();
        }
    }

    public static void main(String[] args) throws Exception {
        Orders a = new Orders("a");
        Orders b = new Orders("b");
        new Thread(() -> loop(a), "orders-a").start();
        new Thread(() -> loop(b), "orders-b").start();
        // Started only once both order threads exist: tests look them up by name.
        System.out.println("orders started");
        if (args.length > 0) {
            plugins(new File(args[0]));
        }
        while (true) {
            Thread.sleep(1000);
        }
    }
}
