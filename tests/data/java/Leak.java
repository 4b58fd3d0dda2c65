// Test fixture (default package): a leak through a static map whose key has a broken
// equals, so every put adds an entry. A thread "leaker" adds RATE entries a second (argument 1,
// default 500), each a Leak$Key mapped to a Leak$Payload holding a 64-byte array. Output:
// "leak rate=<n>/s" once the first entries are in (printed once), so Leak$Key and
// Leak$Payload are loaded when a test reads it; then "leak size=<entries>" every 250 ms, so
// a test can wait for the map to grow instead of sleeping.
import java.util.HashMap;
import java.util.Map;

public class Leak {
    static final Map<Key, Payload> CACHE = new HashMap<>();

    static final class Key {
        final int id;

        Key(int id) {
            this.id = id;
        }

        @Override
        public int hashCode() {
            return id;
        }

        @Override
        public boolean equals(Object o) {
            return false; // broken: a key never finds itself, so nothing is ever replaced
        }
    }

    static final class Payload {
        final byte[] data = new byte[64];
        final int id;

        Payload(int id) {
            this.id = id;
        }
    }

    public static void main(String[] args) throws Exception {
        int rate = args.length > 0 ? Integer.parseInt(args[0]) : 500;
        int perTick = Math.max(1, rate / 50);
        Thread leaker = new Thread(() -> {
            int next = 0;
            boolean told = false;
            long tick = System.nanoTime();
            while (true) {
                synchronized (CACHE) {
                    for (int i = 0; i < perTick; i++) {
                        next++;
                        CACHE.put(new Key(next), new Payload(next));
                    }
                }
                if (!told) {
                    System.out.println("leak rate=" + perTick * 50 + "/s");
                    told = true;
                }
                tick += 20_000_000L;
                long wait = tick - System.nanoTime();
                if (wait > 0) {
                    try {
                        Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }, "leaker");
        leaker.setDaemon(true);
        leaker.start();
        while (true) {
            Thread.sleep(250);
            int size;
            synchronized (CACHE) {
                size = CACHE.size();
            }
            System.out.println("leak size=" + size);
        }
    }
}
