import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;

/**
 * The shapes a probe must survive: compiled with --release 8 and 17,
 * instrumented at every line, entry, exit and field write, and run under
 * -Xverify:all. Its output must not change.
 */
public class Probed {
    static int counter;
    static final List<String> LOG = new ArrayList<String>();

    static {
        counter = 1; // LINE: clinit
        LOG.add("clinit");
    }

    private long total;
    private double ratio;
    String name;
    boolean flag;
    char letter = 'a';
    short small = 3;
    byte tiny = 1;

    Probed(String name) {
        super();
        this.name = name; // LINE: after-super
        this.total = 0L;
    }

    Probed(int n) {
        this(
            new StringBuilder("p")
                .append(n) // LINE: before-this
                .toString());
        ratio = n / 2.0;
    }

    long add(long x, double y) {
        long before = total;
        double scaled = y * 2;
        total += x + (long) scaled;
        return total - before;
    }

    static int loop(int n) {
        int sum = 0;
        for (int i = 0; i < n; i++) {
            sum += i; // LINE: loop-body
        }
        return sum;
    }

    static int branchy(int a) {
        int r;
        if (a > 3) {
            r = a * 2;
        } else {
            r = -a;
        }
        while (r > 100) {
            r /= 2;
        }
        return r; // LINE: join
    }

    static int spin(int n) {
        while (true) {
            if (--n < 0) {
                return n;
            }
        }
    }

    static void empty() {
    }

    static String guarded(String s) {
        try {
            int n = Integer.parseInt(s);
            return "n=" + n;
        } catch (NumberFormatException e) {
            String msg = e.getMessage();
            return "bad:" + msg;
        } finally {
            counter++;
        }
    }

    synchronized void syncMethod(int d) {
        ratio += d;
    }

    void syncBlock() {
        synchronized (this) {
            total++;
        }
    }

    static void fails(int x) {
        if (x < 0) {
            throw new IllegalArgumentException("negative " + x); // LINE: throws
        }
        counter += x;
    }

    static int switches(int k, String s) {
        switch (k) {
            case 0:
                return 10;
            case 1:
                return 11;
            case 5:
                return 15;
            default:
                break;
        }
        switch (s) {
            case "a":
                return 1;
            case "b":
                return 2;
            default:
        }
        switch (k * 1000) {
            case 0:
                return 0;
            case 7000:
                return 7;
            default:
                return -1;
        }
    }

    int lambdas(final int base) {
        IntUnaryOperator f = v -> v + base;
        Supplier<String> g = () -> name + total;
        Runnable r = new Runnable() {
            public void run() {
                counter += base;
            }
        };
        r.run();
        return f.applyAsInt(3) + g.get().length();
    }

    static double mixed(long a, double b, float c, char d, boolean e) {
        long l = a * 2;
        double x = b + l;
        float y = c * 2;
        if (e) {
            x += d;
        }
        return x + y;
    }

    static long nested(int n) {
        long acc = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < i; j++) {
                try {
                    acc += 10 / (j - 1);
                } catch (ArithmeticException ex) {
                    acc -= 1;
                }
            }
        }
        return acc;
    }

    static int belowOne(double d) {
        int below = d < 1.0 ? 1 : 0;
        return below; // LINE: nan
    }

    Object[] arrays(int n) {
        int[] ints = new int[n];
        String[][] grid = new String[n][2];
        for (int i = 0; i < n; i++) {
            ints[i] = i * i;
            grid[i][0] = "r" + i;
        }
        return new Object[] {ints, grid};
    }

    class Inner {
        int depth;

        Inner(int d) {
            depth = d + (int) total;
        }

        int deeper() {
            return depth + 1;
        }
    }

    static class Nested {
        float f = 1.5f;

        float twice() {
            f = f * 2;
            return f;
        }
    }

    public static void main(String[] args) {
        Probed p = new Probed("first");
        Probed q = new Probed(7);
        System.out.println("names " + p.name + " " + q.name + " " + q.ratio);
        System.out.println("add " + p.add(5L, 2.5) + " " + p.add(-1L, 0.25));
        System.out.println("loop " + loop(5));
        System.out.println("branchy " + branchy(2) + " " + branchy(300));
        System.out.println("spin " + spin(3));
        empty();
        System.out.println("guarded " + guarded("12") + " " + guarded("x"));
        p.syncMethod(3);
        p.syncBlock();
        fails(4);
        try {
            fails(-2);
        } catch (IllegalArgumentException e) {
            System.out.println("caught " + e.getMessage());
        }
        System.out.println("switches " + switches(1, "a") + " " + switches(2, "b") + " "
            + switches(7, "z") + " " + switches(3, "z"));
        System.out.println("lambdas " + p.lambdas(4));
        System.out.println("mixed " + mixed(3L, 1.5, 2.5f, 'b', true) + " "
            + mixed(1L, 0.5, 0.5f, 'c', false));
        System.out.println("nested " + nested(4));
        System.out.println("below " + belowOne(Double.NaN) + belowOne(0.5) + belowOne(2.0));
        Object[] a = p.arrays(3);
        System.out.println("arrays " + ((int[]) a[0])[2] + " " + ((String[][]) a[1])[1][0]);
        Inner in = p.new Inner(2);
        System.out.println("inner " + in.deeper());
        Nested n = new Nested();
        System.out.println("nested " + n.twice() + " " + n.twice());
        p.flag = true;
        p.letter = 'z';
        p.small = 9;
        p.tiny = 2;
        System.out.println("fields " + p.flag + p.letter + p.small + p.tiny + " " + p.total
            + " " + p.ratio + " " + counter + " " + LOG);
        System.out.println("sum " + sum(new String[] {"1", "x", "3"}));
    }

    /** Calls in a loop, in a try, a catch and a finally; a callee throws. */
    static int sum(String[] xs) {
        int ok = 0;
        for (String x : xs) {
            try {
                ok += Integer.parseInt(x);
            } catch (NumberFormatException e) {
                ok -= e.getMessage().length();
            } finally {
                LOG.add(x);
            }
        }
        return ok;
    }
}
