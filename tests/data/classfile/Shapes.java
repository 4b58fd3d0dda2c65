// Source of the class files beside it, read by the unit tests of
// src/model/classfile.rs. Rebuild with:
//   javac --release 17 -g -d g Shapes.java && javac --release 17 -g:none -d none Shapes.java
import java.io.Serializable;

public class Shapes implements Runnable, Serializable {
    static final long serialVersionUID = 1L;
    private int count;
    protected String name = "shapes";

    public void run() {
        count++;
        if (count > 3) {
            count = 0;
        }
    }

    static int twice(int x) {
        return x * 2;
    }

    private static class Inner {
        int value() {
            return 42;
        }
    }
}
