// Fixture for the canonical questions (default package; `javac -g --release 17`). Each thread
// carries one bug an agent is asked about:
// - "requests": every ~5 ms a request "req-N"; every 7th order has no address, and cityOf
//   throws a NullPointerException, caught in the loop.
// - "billing": total(qty, priceCents) for qty 1..12 in turn; from qty 10 up a "discount" takes
//   ten items off instead of 10 %, so total(10, 250) is 0. Prints "billing round N" per round.
// - "lookups": lookup(sku) for SKU-0..SKU-9 in turn; SKU-7 takes ~60 ms, the others ~1 ms.
// - "payments": pay(n, amountCents) about 5,000 times a second; every 997th amount is negative.
// main loops on a short sleep, so a thread can be parked for a call. Prints "questions ready"
// once every thread runs.
import java.util.concurrent.locks.LockSupport;

public class Questions {
    static final class Address {
        final String city;

        Address(String city) {
            this.city = city;
        }
    }

    static final class Customer {
        final String name;
        final Address address;

        Customer(String name, Address address) {
            this.name = name;
            this.address = address;
        }
    }

    static final class Order {
        final Customer customer;

        Order(Customer customer) {
            this.customer = customer;
        }
    }

    static volatile long sink;

    static String cityOf(String requestId, Order order) {
        return order.customer.address.city; // LINE: city
    }

    static long total(int qty, int priceCents) {
        long t = (long) qty * priceCents;
        if (qty >= 10) {
            t -= 10L * priceCents; // LINE: discount
        }
        return t;
    }

    static String lookup(String sku) throws InterruptedException {
        Thread.sleep(sku.equals("SKU-7") ? 60 : 1);
        return sku.toLowerCase();
    }

    static void pay(long n, int amountCents) {
        sink += amountCents; // LINE: pay
    }

    static void requests() throws InterruptedException {
        for (int i = 1; ; i++) {
            String requestId = "req-" + i;
            Address address = i % 7 == 0 ? null : new Address("Lyon");
            Order order = new Order(new Customer("c" + i, address));
            try {
                sink += cityOf(requestId, order).length();
            } catch (NullPointerException e) {
                sink--;
            }
            Thread.sleep(5);
        }
    }

    static void billing() throws InterruptedException {
        for (int round = 1; ; round++) {
            for (int qty = 1; qty <= 12; qty++) {
                sink += total(qty, 250);
                Thread.sleep(2);
            }
            System.out.println("billing round " + round);
        }
    }

    static void lookups() throws InterruptedException {
        for (int i = 0; ; i++) {
            sink += lookup("SKU-" + i % 10).length();
        }
    }

    static void payments() {
        for (long n = 1; ; n++) {
            pay(n, n % 997 == 0 ? (int) -n : 100 + (int) (n % 900));
            LockSupport.parkNanos(200_000);
        }
    }

    static Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    interface Body {
        void run() throws Exception;
    }

    static Runnable quietly(Body b) {
        return () -> {
            try {
                b.run();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
    }

    public static void main(String[] args) throws Exception {
        start("requests", quietly(Questions::requests));
        start("billing", quietly(Questions::billing));
        start("lookups", quietly(Questions::lookups));
        start("payments", Questions::payments);
        System.out.println("questions ready");
        while (true) {
            Thread.sleep(20);
        }
    }
}
