// Test fixture (default package): a line that sees enum constants and boxed numbers, for the
// tests that group snapshots by value. Every 20 ms handle(kind, qty) runs with kind cycling
// GARDEN, KITCHEN, TOOLS (TOOLS has a body, so it is an instance of a subclass of Kind) and
// qty a boxed Integer of 1000 or 1001, a new object each call (past Integer's cache), so
// grouping by identity would make a group per call. Output: "kinds started" once.
public class Kinds {
    enum Kind {
        GARDEN,
        KITCHEN,
        TOOLS {
            @Override
            int weight() {
                return 3;
            }
        };

        int weight() {
            return 1;
        }
    }

    static volatile long sink;

    static void handle(Kind kind, Integer qty) {
        sink += kind.weight() * qty; // LINE: handle
    }

    public static void main(String[] args) throws InterruptedException {
        System.out.println("kinds started");
        Kind[] kinds = Kind.values();
        for (int i = 0; ; i++) {
            handle(kinds[i % kinds.length], Integer.valueOf(1000 + i % 2));
            Thread.sleep(20);
        }
    }
}
