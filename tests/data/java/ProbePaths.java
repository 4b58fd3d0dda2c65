// Field paths a probe reads for its trace expressions: each order has a
// kind (an enum, round robin), a line item whose item is null one call
// in four, a region its superclass declares, a package-private quantity
// and a private secret no other class may read; the probed class keeps a
// private config whose mode is package-private in another class, and
// the last order it made (returned by `make` and written to `last`). It
// prints "probe paths started" once `place` and `make` have run.
public class ProbePaths {
    private final PathsConfig cfg = new PathsConfig();
    private PathsOrder last;
    static volatile boolean stop;

    int place(PathsOrder o, PathsLineItem li) {
        int qty = o.qty + (li.item == null ? 0 : 1); // LINE: paths-place
        return qty;
    }

    PathsOrder make(PathsKind kind, int round) {
        PathsOrder o = new PathsOrder(kind, round);
        last = o;
        return o;
    }

    public static void main(String[] args) throws Exception {
        ProbePaths shop = new ProbePaths();
        PathsKind[] kinds = PathsKind.values();
        shop.place(shop.make(PathsKind.GARDEN, 0), new PathsLineItem(null));
        Thread w = new Thread(() -> {
            int round = 0;
            while (!stop) {
                round++;
                PathsOrder o = shop.make(kinds[round % kinds.length], round);
                PathsItem item = round % 4 == 0 ? null : new PathsItem(round % 2 == 0 ? "tools" : "garden");
                shop.place(o, new PathsLineItem(item));
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "paths-worker");
        w.setDaemon(true);
        w.start();
        System.out.println("probe paths started");
        while (true) {
            Thread.sleep(1000);
        }
    }
}

enum PathsKind {
    GARDEN,
    KITCHEN,
    TOOLS
}

class PathsRegion {
    int region = 7;
}

class PathsOrder extends PathsRegion {
    final PathsKind kind;
    final int qty;
    private final String secret = "hidden";

    PathsOrder(PathsKind kind, int qty) {
        this.kind = kind;
        this.qty = qty;
    }

    String secret() {
        return secret;
    }
}

class PathsLineItem {
    final PathsItem item;

    PathsLineItem(PathsItem item) {
        this.item = item;
    }
}

class PathsItem {
    final String category;

    PathsItem(String category) {
        this.category = category;
    }
}

class PathsConfig {
    String mode = "fast";
}
