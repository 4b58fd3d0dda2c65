// A method called about 1,000 times a second, for a statistics probe: once
// the file named by the first argument exists, `work` runs 3,000 times
// (every tenth call throws), a millisecond apart, and the program prints
// its own counts of calls and throws. It prints "counted ready" first.
package stats;

import java.io.File;

public class Counted {
    static int work(int i) {
        if (i % 10 == 7) {
            throw new IllegalStateException("odd " + i);
        }
        return i * 2;
    }

    public static void main(String[] args) throws Exception {
        File go = new File(args[0]);
        System.out.println("counted ready");
        while (!go.exists()) {
            Thread.sleep(5);
        }
        long calls = 0;
        long throwsSeen = 0;
        long sum = 0;
        for (int i = 0; i < 3000; i++) {
            calls++;
            try {
                sum += work(i);
            } catch (IllegalStateException e) {
                throwsSeen++;
            }
            Thread.sleep(1);
        }
        System.out.println("burst done calls=" + calls + " throws=" + throwsSeen + " sum=" + sum);
        while (true) {
            Thread.sleep(1000);
        }
    }
}
