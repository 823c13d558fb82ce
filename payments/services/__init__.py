"""Every write on payments. Status changes go through payments.services.transitions only."""
