// Test fixture for class unloading (default package; compiled with `javac -g --release 17`).
// Argument: a directory. For n = 1, 2: when the file "load-n" appears there, a new classloader
// (parent: bootstrap) loads its own copy of OrdersPlugin, runs it 30 times (every ~10 ms) on the
// thread "plugin-n", then drops every reference to the copy and its loader and calls
// System.gc() every 50 ms until the class is unloaded (a weak reference to it clears). Prints
// "reloads started"; "plugin n kept" when the copy is still loaded after 3 s of that (something
// else holds it), and "plugin n unloaded" once it is gone.
import java.io.File;
import java.lang.ref.WeakReference;
import java.net.URL;
import java.net.URLClassLoader;

public class Reloads {
    static WeakReference<Class<?>> runOnce(URL cp, int n) throws Exception {
        ClassLoader loader = new URLClassLoader(new URL[] {cp}, null);
        Class<?> c = loader.loadClass("OrdersPlugin");
        Runnable plugin = (Runnable) c.getDeclaredConstructor().newInstance();
        Thread t = new Thread(() -> {
            for (int i = 0; i < 30; i++) {
                plugin.run();
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "plugin-" + n);
        t.start();
        t.join();
        return new WeakReference<>(c);
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        URL cp = new File(System.getProperty("java.class.path")).toURI().toURL();
        System.out.println("reloads started");
        for (int n = 1; n <= 2; n++) {
            File trigger = new File(dir, "load-" + n);
            while (!trigger.exists()) {
                Thread.sleep(20);
            }
            WeakReference<Class<?>> copy = runOnce(cp, n);
            long deadline = System.currentTimeMillis() + 3000;
            boolean told = false;
            while (copy.get() != null) {
                System.gc();
                Thread.sleep(50);
                if (!told && System.currentTimeMillis() > deadline) {
                    System.out.println("plugin " + n + " kept");
                    told = true;
                }
            }
            System.out.println("plugin " + n + " unloaded");
        }
        while (true) {
            Thread.sleep(1000);
        }
    }
}
