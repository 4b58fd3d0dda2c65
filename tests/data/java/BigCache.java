// Test fixture (default package): a large cache that a test asks "who holds it" about. A static
// final map holds ENTRIES (argument 1, default 200000) BigCache$Entry values under Integer keys.
// Output: "bigcache ready entries=<n>" once the map is full, then, from the main thread that
// reads the map in a loop, "work t=<ms> n=<lookups>" every 100 ms: the program's own clock and
// its running count of lookups, so a test can compare its throughput around a call.
import java.util.HashMap;
import java.util.Map;

public class BigCache {
    static final Map<Integer, Entry> ENTRIES = new HashMap<>();

    static final class Entry {
        final int id;
        final long[] stamps = new long[2];

        Entry(int id) {
            this.id = id;
        }
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        Integer[] keys = new Integer[n];
        for (int i = 0; i < n; i++) {
            keys[i] = i;
            ENTRIES.put(keys[i], new Entry(i));
        }
        System.out.println("bigcache ready entries=" + ENTRIES.size());
        long start = System.nanoTime();
        long next = start + 100_000_000L;
        long lookups = 0;
        long sum = 0;
        int at = 0;
        while (true) {
            for (int k = 0; k < 1000; k++) {
                sum += ENTRIES.get(keys[at]).id;
                at += 7919;
                if (at >= n) {
                    at -= n;
                }
            }
            lookups += 1000;
            long now = System.nanoTime();
            if (now >= next) {
                System.out.println("work t=" + (now - start) / 1_000_000 + " n=" + lookups + " s=" + (sum & 1));
                next = now + 100_000_000L;
            }
        }
    }
}
