// Fixture: the class Plugin loaded by two separate class loaders, each
// copy with its own static NAME ("A" and "B"). Never names Plugin directly,
// so the application loader does not load a third copy.
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Paths;

public class TwoLoaders {
    static ClassLoader loaderA;
    static ClassLoader loaderB;

    public static void main(String[] args) throws Exception {
        URL here = Paths.get(System.getProperty("java.class.path").split(java.io.File.pathSeparator)[0])
                .toUri().toURL();
        ClassLoader parent = ClassLoader.getPlatformClassLoader();
        loaderA = new URLClassLoader(new URL[] {here}, parent);
        loaderB = new URLClassLoader(new URL[] {here}, parent);
        Class<?> a = Class.forName("Plugin", true, loaderA);
        Class<?> b = Class.forName("Plugin", true, loaderB);
        a.getField("NAME").set(null, "A");
        b.getField("NAME").set(null, "B");
        System.out.println("two loaders ready");
        while (true) {
            Thread.sleep(100);
        }
    }
}
