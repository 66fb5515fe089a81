// A JMX client using only the JDK, run as `java JmxProbe.java HOST PORT [USER]` (password in the
// environment variable JMX_PROBE_PASSWORD). It tells what this caller may do on a node's JMX port:
// one line each for connect, read (java.lang:type=Memory HeapMemoryUsage) and invoke
// (java.lang:type=Memory gc), "ok" or "refused: <message>". Exit code 0 whatever it finds.
import java.util.HashMap;
import java.util.Map;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

public class JmxProbe {
    static String why(Throwable t) {
        while (t.getCause() != null) t = t.getCause();   // the root cause says why
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    public static void main(String[] args) throws Exception {
        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://" + args[0] + ":" + args[1] + "/jmxrmi");
        Map<String, Object> env = new HashMap<>();
        if (args.length > 2) {
            env.put(JMXConnector.CREDENTIALS, new String[] {args[2], System.getenv("JMX_PROBE_PASSWORD")});
        }
        JMXConnector connector;
        try {
            connector = JMXConnectorFactory.connect(url, env);
        } catch (Exception e) {
            System.out.println("connect refused: " + why(e));
            return;
        }
        System.out.println("connect ok");
        MBeanServerConnection mbs = connector.getMBeanServerConnection();
        ObjectName memory = new ObjectName("java.lang:type=Memory");
        try {
            mbs.getAttribute(memory, "HeapMemoryUsage");
            System.out.println("read ok");
        } catch (Exception e) {
            System.out.println("read refused: " + why(e));
        }
        try {
            mbs.invoke(memory, "gc", new Object[0], new String[0]);
            System.out.println("invoke ok");
        } catch (Exception e) {
            System.out.println("invoke refused: " + why(e));
        }
        connector.close();
    }
}
