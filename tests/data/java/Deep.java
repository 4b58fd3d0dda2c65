// Fixture for the inspection bench: a thread parked 20 frames deep, each
// frame with a few locals, holding a 5-link object chain.
public class Deep {
    static final java.util.concurrent.CountDownLatch bottom = new java.util.concurrent.CountDownLatch(1);

    static class City { String name = "Lisbon"; }
    static class Address { City city = new City(); }
    static class Customer { Address address = new Address(); }
    static class Order { Customer customer = new Customer(); int qty = 3; }

    static void descend(int depth, Order order) throws InterruptedException {
        int here = depth;
        String label = "frame-" + depth;
        long stamp = depth * 1000L;
        if (depth == 0) {
            bottom.countDown();
            while (true) {
                Thread.sleep(20); // LINE: deep-bottom
            }
        }
        descend(depth - 1, order);
    }

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> {
            try {
                descend(17, new Order());
            } catch (InterruptedException e) {
                return;
            }
        }, "deep");
        t.start();
        bottom.await();
        System.out.println("deep ready");
        t.join();
    }
}
