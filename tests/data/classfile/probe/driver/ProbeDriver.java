import java.io.File;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

/**
 * Runs instrumented (or original) classes for tests/it/probe_verify.rs:
 * switches every probe helper on, runs each main class named, then loads
 * and initialises every class in the directory (so each is verified),
 * and reports each helper's counters on lines starting "probe ".
 *
 * Usage: java -Xverify:all -cp DIR:DRIVER ProbeDriver DIR Main...
 */
public class ProbeDriver {
    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[0]);
        List<String> names = classes(dir);
        List<Class<?>> helpers = new ArrayList<>();
        for (String n : names) {
            if (n.contains("$$Probe")) {
                Class<?> h = Class.forName(n);
                h.getMethod("init").invoke(null);
                helpers.add(h);
            }
        }
        for (int i = 1; i < args.length; i++) {
            Method main = Class.forName(args[i]).getMethod("main", String[].class);
            main.invoke(null, (Object) new String[0]);
        }
        for (String n : names) {
            try {
                Class.forName(n, true, ProbeDriver.class.getClassLoader());
            } catch (Throwable t) {
                System.out.println("load-fail " + n + ": " + t);
            }
        }
        System.out.println("loaded " + (names.size() - helpers.size()) + " classes");
        for (Class<?> h : helpers) {
            h.getField("live").setBoolean(null, false);
            // Each thread's stripe of 16 longs after one of padding, calls
            // first; then the calls of threads that share a stripe.
            long[] counts = (long[]) h.getField("counts").get(null);
            long calls = ((java.util.concurrent.atomic.AtomicLongArray) h.getField("over").get(null)).get(0);
            for (int i = 16; i < counts.length; i += 16) {
                calls += counts[i];
            }
            long records = ((java.util.concurrent.atomic.AtomicLong) h.getField("head").get(null)).get();
            long errors = h.getField("errors").getLong(null);
            Object last = h.getField("lastError").get(null);
            System.out.println("probe " + h.getName() + " calls=" + calls + " records=" + records
                + " errors=" + errors + " last=" + last);
        }
    }

    private static List<String> classes(Path dir) throws IOException {
        List<String> out = new ArrayList<>();
        try (Stream<Path> s = Files.walk(dir)) {
            s.filter(p -> p.toString().endsWith(".class")).forEach(p -> {
                String rel = dir.relativize(p).toString();
                out.add(rel.substring(0, rel.length() - 6).replace(File.separatorChar, '.'));
            });
        }
        Collections.sort(out);
        return out;
    }
}
