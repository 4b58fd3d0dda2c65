// A second bean, so lookups by name and type have something to tell apart.
public class Greeter {
    public String greet(String who) {
        return "hello " + who;
    }
}
