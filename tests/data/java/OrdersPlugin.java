// Test fixture for stop points: loaded only through Orders' own classloaders (never by the
// application loader), so each load is a separate copy of the class. run() is called every
// ~10 ms by the thread "plugin-N".
public class OrdersPlugin implements Runnable {
    static int runs = 0;

    public void run() {
        runs++;
        int twice = runs * 2; // LINE: plugin-run
        if (twice < 0) {
            System.out.println("overflow");
        }
    }
}
