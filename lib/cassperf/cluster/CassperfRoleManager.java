// The embedded cluster's role manager (cassperf.cluster.role_manager): Cassandra's own
// CassandraRoleManager, except for how the first role comes to be.
//
// CassandraRoleManager.setup() schedules a task (scheduleSetupTask) that, superuser_setup_delay_ms
// after start, creates the superuser `cassandra` with password `cassandra` when system_auth.roles
// is empty. Any local user could log in with it until someone drops it. Here that task is never
// scheduled: the default role never exists. Instead setup() writes the cluster's own role
// (superuser, login) into this node's system_auth.roles before the node serves CQL, from the
// 0600 file named by -Dcassperf.cql_credentials (keys username and password; the password is
// stored as Cassandra stores it, a bcrypt hash, see BCRYPT_LOG2_ROUNDS). Every node writes the row locally at its own
// start (timestamp 0, so a later ALTER ROLE or DROP ROLE wins), so whichever nodes are the
// row's replicas have it, whatever joined when.

package cassperf;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Properties;
import java.util.concurrent.Callable;

import org.apache.cassandra.auth.CassandraRoleManager;
import org.apache.cassandra.cql3.QueryProcessor;
import org.mindrot.jbcrypt.BCrypt;

public class CassperfRoleManager extends CassandraRoleManager
{
    public static final String CREDENTIALS_PROPERTY = "cassperf.cql_credentials";
    // bcrypt's cost guards guessable passwords; this one is 32 random characters (about 190 bits), so
    // the least cost bcrypt takes (2^4 rounds, under a millisecond) is as safe as Cassandra's 2^10 and
    // keeps a login from costing the node tens of milliseconds of CPU (every connection logs in)
    static final int BCRYPT_LOG2_ROUNDS = 4;
    static final String INSERT = "INSERT INTO system_auth.roles (role, is_superuser, can_login, salted_hash) "
                                 + "VALUES (?, true, true, ?) USING TIMESTAMP 0";

    @Override
    public void setup()
    {
        super.setup();
        Properties credentials = read(System.getProperty(CREDENTIALS_PROPERTY));
        String role = credentials.getProperty("username", "");
        String password = credentials.getProperty("password", "");
        if (role.isEmpty() || password.isEmpty())
            throw new IllegalStateException(CREDENTIALS_PROPERTY + " names a file without username and password");
        QueryProcessor.executeInternal(INSERT, role, BCrypt.hashpw(password, BCrypt.gensalt(BCRYPT_LOG2_ROUNDS)));
    }

    @Override
    protected void scheduleSetupTask(Callable<Void> setupTask)
    {
        // the only task CassandraRoleManager schedules creates the default superuser: never run it
    }

    private static Properties read(String path)
    {
        if (path == null)
            throw new IllegalStateException("the node was started without -D" + CREDENTIALS_PROPERTY);
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(Paths.get(path), StandardCharsets.UTF_8))
        {
            properties.load(reader);
        }
        catch (IOException e)
        {
            throw new IllegalStateException("cannot read " + path + ": " + e, e);
        }
        return properties;
    }
}
