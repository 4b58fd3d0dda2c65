// Fixture for stacked suspensions (default package; `javac -g`). Four threads
// ("lane-1".."lane-4") meet at a barrier, then all call handle(...) at the same
// moment; lanes 2 and 4 carry even ids, so a condition on `o.id % 2 == 0` passes
// for two threads at once. Prints "lanes ready" once every lane is running.
import java.util.concurrent.CyclicBarrier;

public class Stacked {
    static final class Order {
        final int id;
        final String customer;

        Order(int id, String customer) {
            this.id = id;
            this.customer = customer;
        }

        String getCustomer() {
            return customer;
        }
    }

    static volatile long handled = 0;

    static void handle(Order o) {
        handled += o.id; // LINE: together
    }

    public static void main(String[] args) throws Exception {
        CyclicBarrier barrier = new CyclicBarrier(4);
        CyclicBarrier started = new CyclicBarrier(5);
        for (int t = 1; t <= 4; t++) {
            final Order o = new Order(t, "customer-" + t);
            Thread lane = new Thread(() -> {
                try {
                    started.await();
                    while (true) {
                        barrier.await();
                        handle(o);
                    }
                } catch (Exception e) {
                    System.out.println("lane stopped: " + e);
                }
            }, "lane-" + t);
            lane.setDaemon(true);
            lane.start();
        }
        started.await();
        System.out.println("lanes ready");
        while (true) {
            Thread.sleep(1000);
        }
    }
}
