// A pooled connection of the leaked connection question: a query takes about 200 µs and
// answers a row count, 0 for the region with no sales.
package pool;

import java.util.concurrent.locks.LockSupport;

final class Conn {
    final int id;

    Conn(int id) {
        this.id = id;
    }

    int query(String table, int key) {
        pause(200_000);
        return table.equals("sales") && key == 4 ? 0 : 3 + key % 7;
    }

    static void pause(long nanos) {
        long until = System.nanoTime() + nanos;
        while (System.nanoTime() < until) {
            LockSupport.parkNanos(until - System.nanoTime());
        }
    }
}
