// Bench fixture (default package): fills the heap with argument 1 megabytes of live objects
// (HeapFill$Item, each holding a 64-byte array) kept by the static list HELD, and indexes
// every 1000th of them in the static map INDEX, so a referrer walk from an Item finds a static
// field. Prints "heap ready <items>" once filled (printed once), then idles.
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class HeapFill {
    static final List<Item> HELD = new ArrayList<>();
    static final Map<Integer, Item> INDEX = new HashMap<>();

    static final class Item {
        final int id;
        final byte[] data = new byte[64];

        Item(int id) {
            this.id = id;
        }
    }

    public static void main(String[] args) throws Exception {
        long megabytes = Long.parseLong(args[0]);
        // An Item (16 bytes) with its array (80 bytes) and its slot in HELD: about 100 bytes.
        long items = megabytes * 1024 * 1024 / 100;
        for (int i = 0; i < items; i++) {
            Item item = new Item(i);
            HELD.add(item);
            if (i % 1000 == 0) {
                INDEX.put(i, item);
            }
        }
        System.out.println("heap ready " + items);
        while (true) {
            Thread.sleep(1000);
        }
    }
}
