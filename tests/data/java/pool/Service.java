// Fixture for the leaked pool connection question (`javac -g --release 17`). Two request
// threads, "worker-1" and "worker-2", each handle a request about every 2 ms: odd requests list
// a customer's orders, even ones render a region's report. Both borrow a connection from a pool
// of 32. The report returns early when its region has no rows (one region in five) and never
// gives that connection back. As real pools do for abandoned connections, a reaper takes back
// any connection borrowed for more than 100 ms, and prints "pool: N reclaimed" once a second when
// it did. Prints "pool service started" once both threads have served a request.
package pool;

import java.util.concurrent.CountDownLatch;

public class Service {
    static final Pool POOL = new Pool(32);
    static volatile long sink;

    static int orders(int customer) {
        Conn c = POOL.acquire();
        try {
            return c.query("orders", customer);
        } finally {
            POOL.release(c);
        }
    }

    static String report(int region) {
        Conn c = POOL.acquire();
        int rows = c.query("sales", region);
        if (rows == 0) {
            return "region " + region + ": no sales";
        }
        try {
            return "region " + region + ": " + rows + " rows";
        } finally {
            POOL.release(c);
        }
    }

    static void handle(int request) {
        if (request % 2 == 1) {
            sink += orders(request % 100);
        } else {
            sink += report(request / 2 % 5).length();
        }
    }

    public static void main(String[] args) throws Exception {
        CountDownLatch served = new CountDownLatch(2);
        for (int w = 1; w <= 2; w++) {
            Thread worker =
                    new Thread(
                            () -> {
                                for (int n = 0; ; n++) {
                                    handle(n);
                                    if (n == 1) {
                                        served.countDown();
                                    }
                                    Conn.pause(2_000_000);
                                }
                            },
                            "worker-" + w);
            worker.setDaemon(true);
            worker.start();
        }
        Thread reaper =
                new Thread(
                        () -> {
                            long last = System.nanoTime();
                            int reclaimed = 0;
                            while (true) {
                                Conn.pause(50_000_000);
                                reclaimed += POOL.reclaim(100_000_000L);
                                if (System.nanoTime() - last >= 1_000_000_000L) {
                                    if (reclaimed > 0) {
                                        System.out.println("pool: " + reclaimed + " reclaimed");
                                    }
                                    reclaimed = 0;
                                    last = System.nanoTime();
                                }
                            }
                        },
                        "pool-reaper");
        reaper.setDaemon(true);
        reaper.start();
        served.await();
        System.out.println("pool service started");
        while (true) {
            Thread.sleep(100);
        }
    }
}
