//! Database URLs: swapping the database name.

/// `url` with its path replaced by `/database`, keeping the query string.
pub(crate) fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.find('?') {
        Some(i) => (&url[..i], &url[i..]),
        None => (url, ""),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    format!("{}/{}{}", &base[..path_start], database, query)
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn replaces_the_path_and_keeps_the_query() {
        assert_eq!(
            with_database("postgres://u:p@h:5432/postgres?sslmode=disable", "t1"),
            "postgres://u:p@h:5432/t1?sslmode=disable"
        );
        assert_eq!(
            with_database("mysql://root@127.0.0.1:3306/mysql", "t2"),
            "mysql://root@127.0.0.1:3306/t2"
        );
    }

    #[test]
    fn adds_a_path_when_there_is_none() {
        assert_eq!(with_database("postgres://h:1", "t"), "postgres://h:1/t");
        assert_eq!(
            with_database("postgres://h:1?x=y", "t"),
            "postgres://h:1/t?x=y"
        );
        assert_eq!(with_database("postgres://h:1/", "t"), "postgres://h:1/t");
    }
}
