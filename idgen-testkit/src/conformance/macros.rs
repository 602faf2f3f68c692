//! The macros that instantiate the suites: one `#[test]` per case, in a module per subject.

/// The lease-store suite for one subject ([`LeaseSubject`](crate::conformance::LeaseSubject)):
/// a module `$name` with one test per case, and the child entry `lease_child` the process cases
/// start. With a third argument `mysql`, also the case of a server without autocommit; with
/// `key_value` (etcd, Redis), the cases that are not about SQL tables (not the missing table,
/// the custom table in a schema).
///
/// ```
/// # // A stand-in subject (an adapter's test file opens a pool to `url` instead).
/// # use idgen_testkit::conformance::MemorySubject as Memory;
/// // tests mysql_lease::sixty_four_tasks_get_distinct_node_ids, … and mysql_lease::lease_child
/// idgen_testkit::lease_suite!(mysql_lease, Memory, mysql);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! lease_suite {
    (@extra sql $subject:ty) => {
        $crate::__conformance_cases!(lease<$subject>:
            a_missing_table_is_created_by_the_claim_or_refused_with_its_ddl,
            a_custom_table_in_a_schema_and_a_refused_name,
        );
        $crate::__conformance_cases!(connections<$subject>:
            a_cancelled_call_leaves_the_applications_connections_as_they_were,
        );
    };
    (@extra mysql $subject:ty) => {
        $crate::__conformance_cases!(lease_lifecycle<$subject>:
            every_write_is_committed_on_a_server_without_autocommit,
        );
        $crate::__conformance_cases!(connections<$subject>:
            an_autocommit_off_pool_keeps_its_setting_and_gets_committed_writes,
        );
    };
    // The module, with the cases of every store and those of the `@extra` groups named.
    (@module $name:ident, $subject:ty; $($extra:ident)*) => {
        $crate::__conformance_module!($name {
            $crate::__conformance_cases!(lease<$subject>:
                sixty_four_tasks_get_distinct_node_ids,
                a_namespace_keeps_the_layout_it_was_first_used_with,
                the_ninth_of_eight_node_ids_gets_the_capacity_error,
                rows_are_created_as_the_node_space_fills,
                the_store_claims_renews_and_releases,
                a_renewal_answered_after_release_leaves_the_node_id_free,
                a_released_node_id_is_free_at_once_and_keeps_its_last_timestamp,
                a_new_holder_never_issues_at_or_below_the_rows_last_timestamp,
                a_claim_from_a_clock_beyond_the_allowance_of_the_stores_is_refused,
                a_holder_whose_clock_moves_past_the_allowance_is_fenced_at_its_next_renewal,
            );
            $crate::__conformance_cases!(lease_forgetting<$subject>:
                a_new_row_waits_one_ttl_and_the_allowance_a_released_one_does_not,
                a_lease_taken_over_after_expiry_waits_one_ttl_and_the_allowance,
                a_holder_the_store_forgot_never_issues_at_or_above_the_new_holders_first_id,
                a_new_row_issues_at_once_above_one_ttl_and_the_allowance,
                a_lease_taken_over_after_expiry_issues_at_once_above_its_bound,
                a_node_id_released_before_its_bound_is_issued_above_it_at_once,
                a_holder_whose_row_is_forgotten_fences_at_its_next_renewal,
                a_holder_whose_row_is_taken_by_another_fences_at_its_next_renewal,
                a_holder_whose_lease_table_is_dropped_fences_and_a_new_claim_creates_it,
            );
            $crate::__conformance_cases!(lease_lifecycle<$subject>:
                a_renewal_in_flight_during_release_leaves_the_node_id_free,
                a_detached_store_releases_after_the_runtime_stopped,
                a_generator_stops_before_its_lease_expires_when_the_database_is_unreachable,
            );
            $crate::__conformance_cases!(lease_abandoned<$subject>:
                a_claim_that_lands_after_its_caller_gave_up_is_given_back,
                a_release_that_did_not_reach_the_store_is_retried,
            );
            $crate::__conformance_child_cases!(lease_processes<$subject>("lease_child"):
                a_killed_holder_loses_its_node_id_after_the_ttl,
                four_processes_hold_distinct_node_ids_and_issue_distinct_ids,
                a_process_that_returns_from_main_without_release_frees_its_node_id_within_a_second,
            );
            $($crate::lease_suite!(@extra $extra $subject);)*
        } lease_child => lease_processes::<$subject>;);
    };
    ($name:ident, $subject:ty $(, $extra:ident)?) => {
        $crate::__conformance_groups!(lease_suite, $name, $subject $(, $extra)?);
    };
}

/// The hi-lo source suite for one subject ([`HiLoSubject`](crate::conformance::HiLoSubject)):
/// a module `$name` with one test per case, and the child entry `hilo_child`. With a third
/// argument `mysql`, also the case of a server without autocommit; with `key_value` (etcd,
/// Redis), the cases that are not about SQL (not the caller's rolled-back transaction, not a
/// lock held by another session).
///
/// ```
/// # // A stand-in subject (an adapter's test file opens a pool to `url` instead).
/// # use idgen_testkit::conformance::MemorySubject as Memory;
/// // tests mysql_hilo::the_increment_is_checked_at_start_up, … and mysql_hilo::hilo_child
/// idgen_testkit::hilo_suite!(mysql_hilo, Memory, mysql);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! hilo_suite {
    (@extra sql $subject:ty) => {
        $crate::__conformance_cases!(hilo<$subject>:
            a_rolled_back_caller_transaction_does_not_return_a_block,
            build_returns_within_its_timeout_while_another_session_holds_the_counter,
        );
        $crate::__conformance_cases!(hilo_forgetting<$subject>:
            build_returns_within_its_timeout_while_the_floor_query_waits_for_a_lock,
        );
        $crate::__conformance_cases!(connections<$subject>:
            a_cancelled_allocation_leaves_the_applications_connections_as_they_were,
        );
    };
    (@extra mysql $subject:ty) => {
        $crate::__conformance_cases!(hilo<$subject>:
            blocks_are_committed_on_a_server_without_autocommit,
        );
    };
    // The module, with the cases of every source and those of the `@extra` groups named.
    (@module $name:ident, $subject:ty; $($extra:ident)*) => {
        $crate::__conformance_module!($name {
            $crate::__conformance_cases!(hilo<$subject>:
                the_increment_is_checked_at_start_up,
                a_missing_counter_is_created_at_start_up_or_refused_with_its_migration,
                blocks_follow_pooled_lo_arithmetic,
                several_blocks_in_one_call_are_distinct_blocks_of_the_counter,
                a_counter_set_back_fails_closed,
                the_database_going_away_and_coming_back,
            );
            $crate::__conformance_cases!(hilo_forgetting<$subject>:
                a_floor_keeps_a_new_process_above_a_counter_set_back,
                a_sequence_whose_increment_changes_while_it_runs_fails_closed,
                a_counter_restored_between_two_processes_blocks_is_caught_with_a_floor,
                a_floor_far_above_the_counter_is_reached_in_one_step,
                raising_the_counter_never_moves_it_backwards,
            );
            $crate::__conformance_child_cases!(hilo<$subject>("hilo_child"):
                four_processes_and_a_script_share_one_counter,
            );
            $($crate::hilo_suite!(@extra $extra $subject);)*
        } hilo_child => hilo::<$subject>;);
    };
    ($name:ident, $subject:ty $(, $extra:ident)?) => {
        $crate::__conformance_groups!(hilo_suite, $name, $subject $(, $extra)?);
    };
}

/// The operator suite for one subject ([`OperatorSubject`](crate::conformance::OperatorSubject)):
/// a module `$name` with one test per case of
/// [`operator`](crate::conformance::operator): what `idgen leases list|free` relies on.
///
/// ```
/// # // A stand-in subject (an adapter's test file opens a pool or client to `url` instead).
/// # use idgen_testkit::conformance::MemorySubject as Memory;
/// // tests mysql_operator::nothing_is_listed_or_freed_before_the_first_claim, …
/// idgen_testkit::operator_suite!(mysql_operator, Memory);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! operator_suite {
    ($name:ident, $subject:ty) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            $crate::__conformance_cases!(operator<$subject>:
                nothing_is_listed_or_freed_before_the_first_claim,
                held_leases_are_listed_with_holder_end_and_bound,
                a_free_naming_another_holder_is_refused_naming_the_holder_now,
                a_live_lease_is_freed_only_with_force_and_then_taken_over_after_a_ttl,
                an_expired_lease_is_freed_without_force_and_then_taken_over_not_exact,
                a_released_node_id_is_not_freed_and_its_next_claim_is_exact,
            );
        }
    };
}

/// Processes starting together on empty databases, for a lease subject and a hi-lo subject of
/// one adapter on one database: a module `$name` with the case and its child entry.
///
/// ```
/// # // A stand-in subject (an adapter's test file opens a pool to `url` instead).
/// # use idgen_testkit::conformance::MemorySubject as Memory;
/// idgen_testkit::startup_suite!(mysql_startup, Memory, Memory);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! startup_suite {
    ($name:ident, $lease:ty, $hilo:ty) => {
        $crate::__conformance_module!($name {
            $crate::__conformance_child_cases!(startup<$lease, $hilo>("startup_child"):
                eight_processes_start_together_on_twenty_empty_databases,
            );
        } startup_child => startup::<$lease, $hilo>;);
    };
}

/// Processes of two adapters on one database: children on the first subject of each pair,
/// this process on the second, sharing one lease table and one hi-lo counter.
///
/// ```
/// # // A stand-in subject (an adapter's test file opens a pool to `url` instead).
/// # use idgen_testkit::conformance::MemorySubject as Memory;
/// // (An adapter's file names two adapters' subjects: children first, this process second.)
/// idgen_testkit::cross_adapter_suite!(mysql_with_itself, lease: Memory, Memory; hilo: Memory, Memory);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! cross_adapter_suite {
    ($name:ident, lease: $child_lease:ty, $here_lease:ty; hilo: $child_hilo:ty, $here_hilo:ty) => {
        $crate::__conformance_module!($name {
            $crate::__conformance_child_cases!(lease_processes<$child_lease, $here_lease>("lease_child"):
                processes_of_two_adapters_never_share_a_node_id,
            );
            $crate::__conformance_child_cases!(hilo<$child_hilo, $here_hilo>("hilo_child"):
                processes_of_two_adapters_share_one_counter,
            );
        }
            lease_child => lease_processes::<$child_lease>;
            hilo_child => hilo::<$child_hilo>;
        );
    };
}

/// The groups of cases a subject gets: on etcd and Redis (`key_value`), those of every store;
/// on an SQL database, also the `sql` group, and the group its third argument names (`mysql`).
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_groups {
    ($suite:ident, $name:ident, $subject:ty, key_value) => {
        $crate::$suite!(@module $name, $subject;);
    };
    ($suite:ident, $name:ident, $subject:ty $(, $extra:ident)?) => {
        $crate::$suite!(@module $name, $subject; sql $($extra)?);
    };
}

/// A suite instance's module `$name`: the `$cases`, and each child entry (`lease_child`, …) as a
/// `#[test]` that runs `child_main` of its suite module in a child process (and does nothing in
/// a normal run).
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_module {
    ($name:ident { $($cases:tt)* } $($child:ident => $module:ident::<$($subject:ty),+>;)+) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            $($cases)*

            $(
                #[test]
                fn $child() {
                    $crate::conformance::$module::child_main::<$($subject),+>();
                }
            )+
        }
    };
}

/// One `#[test]` per case of `$module`, each running `case::<subjects>()` (one case per
/// step, so the subjects repeat once per test).
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_cases {
    ($module:ident<$($subject:ty),+>:) => {};
    ($module:ident<$($subject:ty),+>: $case:ident, $($rest:ident,)*) => {
        #[test]
        fn $case() {
            $crate::conformance::run($crate::conformance::$module::$case::<$($subject),+>());
        }
        $crate::__conformance_cases!($module<$($subject),+>: $($rest,)*);
    };
}

/// One `#[test]` per case of `$module` that starts child processes at the entry `$entry`.
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_child_cases {
    ($module:ident<$($subject:ty),+>($entry:literal):) => {};
    ($module:ident<$($subject:ty),+>($entry:literal): $case:ident, $($rest:ident,)*) => {
        #[test]
        fn $case() {
            let children = $crate::conformance::Children::entry(module_path!(), $entry);
            $crate::conformance::run(
                $crate::conformance::$module::$case::<$($subject),+>(children),
            );
        }
        $crate::__conformance_child_cases!($module<$($subject),+>($entry): $($rest,)*);
    };
}

/// [`LeaseSubject`](crate::conformance::LeaseSubject) (and so
/// [`OperatorSubject`](crate::conformance::OperatorSubject)) for a subject whose store is
/// idgen-sql's `SqlLeaseStore` (every SQL adapter's), written once: `$store` on the pool `$pool` made from
/// `url`, and on the application's pool and its [`AppPool`](crate::conformance::AppPool) from
/// `$app` made from `url` and `spec`. Generics and bounds of the impl go in the brackets.
///
/// ```ignore
/// idgen_testkit::sql_lease_subject!(impl[] SqlxPostgres, SqlxLeaseStore<Postgres>,
///     DbKind::Postgres, |url| PgPool::connect_lazy(url)?, |url, spec| postgres_app_pool(url, spec)?);
/// ```
#[macro_export]
macro_rules! sql_lease_subject {
    (impl[$($gen:tt)*] $subject:ty $(where [$($bound:tt)*])?, $store:ty, $db:expr,
     |$url:ident| $pool:expr, |$app_url:ident, $spec:ident| $app:expr) => {
        impl<$($gen)*> $crate::conformance::LeaseSubject for $subject $(where $($bound)*)? {
            type Store = $store;
            const DATABASE: $crate::conformance::DbKind = $db;
            async fn store(
                $url: &str,
                table: &str,
            ) -> Result<Self::Store, $crate::__idgen_engine::lease::BoxError> {
                Ok(<$store>::with_table($pool, table)?)
            }
            async fn create_table(
                store: &Self::Store,
            ) -> Result<(), $crate::__idgen_engine::lease::BoxError> {
                Ok(store.create_table().await?)
            }
            async fn app_store(
                $app_url: &str,
                table: &str,
                $spec: $crate::conformance::AppPoolSpec,
            ) -> Result<
                (Self::Store, Box<dyn $crate::conformance::AppPool>),
                $crate::__idgen_engine::lease::BoxError,
            > {
                let (pool, app) = $app;
                Ok((<$store>::with_table(pool, table)?, app))
            }
        }
    };
}
