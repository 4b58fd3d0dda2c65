// Test fixture (default package; compiled by tests/it/support/java.rs with `javac -g --release 17`).
// Needs JDK 21+: starts virtual threads through reflection (the source level is 17). One virtual
// thread calls hit() every 50 ms (a stop point's target); three more park for ever. Prints
// "virtual ready" once they run. Run with includevirtualthreads=y to see them over JDWP.
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

public class VirtualPark {
    static final CountDownLatch NEVER = new CountDownLatch(1);
    static volatile long hits;

    public static void main(String[] args) throws Exception {
        java.lang.reflect.Method start = Thread.class.getMethod("startVirtualThread", Runnable.class);
        start.invoke(null, (Runnable) () -> {
            while (true) {
                hit();
                LockSupport.parkNanos(50_000_000L);
            }
        });
        for (int i = 0; i < 3; i++) {
            start.invoke(null, (Runnable) () -> {
                try {
                    NEVER.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        while (hits < 2) {
            Thread.sleep(10);
        }
        System.out.println("virtual ready");
        while (true) {
            Thread.sleep(100);
        }
    }

    static void hit() {
        hits++; // LINE: hit
    }
}
