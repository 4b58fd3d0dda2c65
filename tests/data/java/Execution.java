// Fixture for execution control: a loop whose steps, returns and counters
// the program prints, so a test can observe what stepping, set_value,
// force_return and pop_frame changed.
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class Execution {
    static int popCount = 0;
    static int limit = 5;
    static int[] arr = {1, 2, 3};
    static List<String> list = new ArrayList<>(List.of("a", "b"));
    static Map<String, Integer> map = new HashMap<>();
    String name = "exec";

    static int helper(int x) {
        int y = x * 2; // LINE: helper-body
        return y;
    }

    static int compute() {
        return 1; // LINE: compute-return
    }

    static int counted() {
        popCount++;
        return popCount; // LINE: counted-return
    }

    int stepTarget(int a) {
        int b = a + 1; // LINE: step-start
        int c = helper(b); // LINE: step-call
        int d = c + 1; // LINE: step-next
        return d;
    }

    public static void main(String[] args) throws Exception {
        Execution e = new Execution();
        map.put("k", 1);
        System.out.println("execution ready");
        for (int round = 0; ; round++) {
            int r = e.stepTarget(round); // LINE: main-call
            int c = compute();
            System.out.println("compute " + c); // LINE: print-compute
            int n = counted();
            System.out.println("counted " + n + " popCount " + popCount);
            System.out.println("limit " + limit + " arr1 " + arr[1] + " name " + e.name + " list0 " + list.get(0) + " r " + r);
            Thread.sleep(100); // LINE: main-sleep
        }
    }
}
