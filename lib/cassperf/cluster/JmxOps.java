// MBean operations on several Cassandra nodes from one JVM (cassperf.cluster.jmx_ops).
//
// nodetool starts a JVM per call and per node; a cold-cache step on six nodes took 18 of them
// (15-27 s on two shared cores). This runs every operation of a step in one JVM, over the same
// JMX port and credentials nodetool uses. Run in source-file mode: java JmxOps.java USER PWFILE
//
// stdin, one operation per line, tab-separated:  host  port  mbean  operation  [arg ...]
// An argument is matched to the operation's parameter types (String, int, long, boolean,
// String[] as comma-separated; a trailing String... may be left out).
// stdout, one line per operation, in order:  OK <tab> index <tab> result   or   ERR <tab> index <tab> why
// The password is read from PWFILE (nodetool's -pwf format: "user password" lines), never argv.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.management.MBeanOperationInfo;
import javax.management.MBeanParameterInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

public class JmxOps {
    public static void main(String[] argv) throws Exception {
        String user = argv[0];
        String password = null;
        for (String line : Files.readAllLines(Path.of(argv[1]), StandardCharsets.UTF_8)) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 2 && f[0].equals(user)) password = f[1];
        }
        if (password == null) {
            System.out.println("ERR\t-1\tno password for user " + user + " in " + argv[1]);
            System.exit(2);
        }
        Map<String, JMXConnector> open = new HashMap<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        int index = 0;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String[] f = line.split("\t", -1);
            try {
                String where = f[0] + ":" + f[1];
                JMXConnector c = open.get(where);
                if (c == null) {
                    JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://" + where + "/jmxrmi");
                    Map<String, Object> env = new HashMap<>();
                    env.put(JMXConnector.CREDENTIALS, new String[] {user, password});
                    c = JMXConnectorFactory.connect(url, env);
                    open.put(where, c);
                }
                List<String> args = new ArrayList<>();
                for (int k = 4; k < f.length; k++) args.add(f[k]);
                Object result = invoke(c.getMBeanServerConnection(), new ObjectName(f[2]), f[3], args);
                System.out.println("OK\t" + index + "\t" + (result == null ? "" : oneLine(String.valueOf(result))));
            } catch (Exception e) {
                Throwable t = e;
                while (t.getCause() != null) t = t.getCause();
                System.out.println("ERR\t" + index + "\t" + oneLine(t.getClass().getSimpleName() + ": " + t.getMessage()));
            }
            System.out.flush();
            index++;
        }
        for (JMXConnector c : open.values()) {
            try { c.close(); } catch (Exception ignored) { }
        }
    }

    static Object invoke(MBeanServerConnection mbs, ObjectName name, String operation, List<String> args)
            throws Exception {
        for (MBeanOperationInfo op : mbs.getMBeanInfo(name).getOperations()) {
            if (!op.getName().equals(operation)) continue;
            MBeanParameterInfo[] params = op.getSignature();
            boolean varargs = params.length > 0 && params[params.length - 1].getType().equals("[Ljava.lang.String;");
            if (params.length != args.size() && !(varargs && args.size() == params.length - 1)) continue;
            Object[] values = new Object[params.length];
            String[] types = new String[params.length];
            for (int k = 0; k < params.length; k++) {
                types[k] = params[k].getType();
                String a = k < args.size() ? args.get(k) : null;
                values[k] = convert(types[k], a);
            }
            return mbs.invoke(name, operation, values, types);
        }
        throw new IllegalArgumentException("no operation " + operation + " taking " + args.size() + " arguments on " + name);
    }

    static Object convert(String type, String a) {
        switch (type) {
            case "java.lang.String": return a;
            case "int": return Integer.parseInt(a);
            case "long": return Long.parseLong(a);
            case "boolean": return Boolean.parseBoolean(a);
            case "[Ljava.lang.String;": return a == null || a.isEmpty() ? new String[0] : a.split(",");
            default: throw new IllegalArgumentException("parameter type " + type + " is not supported");
        }
    }

    static String oneLine(String s) {
        return s.replace('\n', ' ').replace('\t', ' ').replace('\r', ' ');
    }
}
