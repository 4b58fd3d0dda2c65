// The fixed-size pool of the leaked connection question: `acquire` waits for an idle connection,
// `release` gives one back, and `reclaim` takes back those borrowed for longer than a limit.
package pool;

import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Map;

final class Pool {
    private final ArrayDeque<Conn> idle = new ArrayDeque<>();
    private final Map<Conn, Long> borrowed = new IdentityHashMap<>();

    Pool(int size) {
        for (int i = 0; i < size; i++) {
            idle.add(new Conn(i));
        }
    }

    synchronized Conn acquire() {
        while (idle.isEmpty()) {
            try {
                wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for a connection");
            }
        }
        Conn c = idle.poll();
        borrowed.put(c, System.nanoTime());
        return c;
    }

    synchronized void release(Conn c) {
        if (borrowed.remove(c) != null) {
            idle.add(c);
            notify();
        }
    }

    synchronized int reclaim(long olderThanNanos) {
        long now = System.nanoTime();
        int n = 0;
        for (Iterator<Map.Entry<Conn, Long>> it = borrowed.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Conn, Long> e = it.next();
            if (now - e.getValue() > olderThanNanos) {
                idle.add(e.getKey());
                it.remove();
                n++;
            }
        }
        if (n > 0) {
            notifyAll();
        }
        return n;
    }
}
