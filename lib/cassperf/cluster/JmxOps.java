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
// An operation named "get:Name" reads the MBean's attribute Name instead; "set:Name" with one
// argument writes it and answers the value read back.
// With a third argument "parallel" every line runs in a thread of its own as soon as it is read,
// and answers come as each operation ends (matched by index): a session that asks every node at
// once and keeps its connections (cassperf.cluster.jmx_ops.JmxSession). A kept connection that
// fails with an I/O error (its node restarted since) is made again once.
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.management.Attribute;
import javax.management.MBeanAttributeInfo;
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
        boolean parallel = argv.length > 2 && argv[2].equals("parallel");
        Map<String, JMXConnector> open = new ConcurrentHashMap<>();
        ExecutorService pool = parallel ? Executors.newCachedThreadPool() : null;
        final String pw = password;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        int index = 0;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            final String[] f = line.split("\t", -1);
            final int at = index++;
            if (pool != null) pool.submit(() -> answer(open, user, pw, f, at));
            else answer(open, user, pw, f, at);
        }
        if (pool != null) {
            pool.shutdown();
            pool.awaitTermination(1, TimeUnit.HOURS);
        }
        for (JMXConnector c : open.values()) {
            try { c.close(); } catch (Exception ignored) { }
        }
    }

    static JMXConnector connector(Map<String, JMXConnector> open, String where, String user, String password)
            throws Exception {
        synchronized (open) {
            JMXConnector c = open.get(where);
            if (c == null) {
                JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://" + where + "/jmxrmi");
                Map<String, Object> env = new HashMap<>();
                env.put(JMXConnector.CREDENTIALS, new String[] {user, password});
                c = JMXConnectorFactory.connect(url, env);
                open.put(where, c);
            }
            return c;
        }
    }

    static void answer(Map<String, JMXConnector> open, String user, String password, String[] f, int index) {
        String out;
        try {
            String where = f[0] + ":" + f[1];
            List<String> args = new ArrayList<>();
            for (int k = 4; k < f.length; k++) args.add(f[k]);
            ObjectName name = new ObjectName(f[2]);
            Object result;
            try {
                result = call(connector(open, where, user, password).getMBeanServerConnection(), name, f[3], args);
            } catch (java.io.IOException lost) {
                // a connection kept from before the node restarted: connect again, once
                synchronized (open) {
                    JMXConnector old = open.remove(where);
                    if (old != null) try { old.close(); } catch (Exception ignored) { }
                }
                result = call(connector(open, where, user, password).getMBeanServerConnection(), name, f[3], args);
            }
            out = "OK\t" + index + "\t" + (result == null ? "" : oneLine(String.valueOf(result)));
        } catch (Exception e) {
            Throwable t = e;
            while (t.getCause() != null) t = t.getCause();
            out = "ERR\t" + index + "\t" + oneLine(t.getClass().getSimpleName() + ": " + t.getMessage());
        }
        synchronized (System.out) {
            System.out.println(out);
            System.out.flush();
        }
    }

    static Object call(MBeanServerConnection mbs, ObjectName name, String op, List<String> args) throws Exception {
        if (op.startsWith("get:")) return mbs.getAttribute(name, op.substring(4));
        if (op.startsWith("set:")) return set(mbs, name, op.substring(4), args);
        return invoke(mbs, name, op, args);
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

    static Object set(MBeanServerConnection mbs, ObjectName name, String attribute, List<String> args)
            throws Exception {
        for (MBeanAttributeInfo a : mbs.getMBeanInfo(name).getAttributes()) {
            if (!a.getName().equals(attribute) || !a.isWritable() || args.size() != 1) continue;
            mbs.setAttribute(name, new Attribute(attribute, convert(a.getType(), args.get(0))));
            return mbs.getAttribute(name, attribute);
        }
        throw new IllegalArgumentException("no writable attribute " + attribute + " on " + name);
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
