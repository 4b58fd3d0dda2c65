// A Java agent for the probe tests (default package). Loaded into a running JVM with
// `jcmd <pid> JVMTI.agent_load <jar> <class>,<class file>` (its jar's manifest names it as the
// Agent-Class, with Can-Redefine-Classes), it redefines the loaded class of that name with the
// file's bytes, as another tool in the JVM (an APM agent, Arthas) would behind the debugger's
// back. Prints "redefined by agent <class>", or "agent found no <class>".
import java.lang.instrument.ClassDefinition;
import java.lang.instrument.Instrumentation;
import java.nio.file.Files;
import java.nio.file.Path;

public class RedefineAgent {
    public static void agentmain(String args, Instrumentation inst) throws Exception {
        int eq = args.indexOf(',');
        String name = args.substring(0, eq);
        byte[] bytes = Files.readAllBytes(Path.of(args.substring(eq + 1)));
        for (Class<?> c : inst.getAllLoadedClasses()) {
            if (c.getName().equals(name)) {
                inst.redefineClasses(new ClassDefinition(c, bytes));
                System.out.println("redefined by agent " + name);
                return;
            }
        }
        System.out.println("agent found no " + name);
    }
}
